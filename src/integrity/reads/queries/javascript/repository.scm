; The repository's files as files: `.git`, modification times, symbolic links.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (member_expression) (subscript_expression) (call_expression)] @read
  (#reads? @read
    "*.mtime"
    "*.mtimeMs"
    "*.ctime"
    "*.ctimeMs"
    "*.birthtime"
    "*.lstatSync"
    "fs.lstat"
    "fs.promises.lstat"
    "*.isSymbolicLink"
    "fs.readlinkSync"
    "fs.readlink"
    "fs.promises.readlink"
    "fs.realpathSync"
    "fs.realpath"
    "fs.promises.realpath"))

; A path into the repository's own metadata (a `.git` segment), spelled or built.
([(string) (template_string) (binary_expression)] @read
  (#git-path? @read))
