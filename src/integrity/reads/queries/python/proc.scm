; The process's own state read as files under `/proc` (`/proc/self/cmdline`,
; `/proc/self/environ`, `/proc/<pid>/stat`), by any file API: the path, spelled or built.
([(string) (concatenated_string) (binary_operator)] @read
  (#proc-path? @read))
