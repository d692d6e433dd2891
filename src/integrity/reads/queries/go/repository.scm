; The repository's files as files: `.git`, modification times, symbolic links.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (selector_expression) (call_expression)] @read
  (#reads? @read
    "os.Lstat"
    "os.Readlink"
    "path/filepath.EvalSymlinks"
    "*.ModTime"))

; A path into the repository's own metadata (a `.git` segment), spelled or built.
([(interpreted_string_literal) (raw_string_literal) (binary_expression)] @read
  (#git-path? @read))
