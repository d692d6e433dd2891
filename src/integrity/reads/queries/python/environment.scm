; The process's environment variables.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "os.environ"
    "os.environb"
    "os.getenv"
    "os.getenvb"
    "os.putenv"
    "os.unsetenv"
    "posix.environ"
    "nt.environ"))
