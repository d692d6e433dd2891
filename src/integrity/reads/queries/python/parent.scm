; The parent process.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "os.getppid"
    "psutil.Process().parent"
    "psutil.Process().ppid"))
