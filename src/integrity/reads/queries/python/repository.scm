; The repository's files as files: `.git`, modification times, symbolic links.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "os.path.getmtime"
    "os.path.getctime"
    "os.path.getatime"
    "*.st_mtime"
    "*.st_mtime_ns"
    "*.st_ctime"
    "*.st_ctime_ns"
    "*.st_atime"
    "os.path.islink"
    "os.readlink"
    "*.lstat"
    "*.is_symlink"
    "os.path.realpath"))

; A path into the repository's own metadata (a `.git` segment), spelled or built.
([(string) (concatenated_string) (binary_operator)] @read
  (#git-path? @read))
