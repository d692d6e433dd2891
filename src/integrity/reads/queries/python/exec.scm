; How the process was started: the interpreter's own arguments and the executable's path.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (attribute) (subscript) (call)] @read
  (#reads? @read
    "sys.executable"
    "sys.orig_argv"
    "sys._base_executable"))
