; The repository's files as files: `.git`, modification times, symbolic links.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (scoped_identifier) (field_expression) (call_expression)] @read
  (#reads? @read
    "*.symlink_metadata"
    "*metadata().modified"
    "*metadata().created"
    "*metadata().accessed"
    "*.is_symlink"
    "*.read_link"
    "std.fs.canonicalize"))

; A path into the repository's own metadata (a `.git` segment), spelled or built.
([(string_literal) (raw_string_literal)] @read
  (#git-path? @read))
