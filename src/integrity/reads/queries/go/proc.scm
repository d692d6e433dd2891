; The process's own state read as files under `/proc` (`/proc/self/cmdline`,
; `/proc/self/environ`, `/proc/<pid>/stat`), by any file API: the path, spelled or built.
([(interpreted_string_literal) (raw_string_literal) (binary_expression)] @read
  (#proc-path? @read))
