; How the process was started: the interpreter's own arguments and the executable's path.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (selector_expression) (call_expression)] @read
  (#reads? @read
    "os.Executable"))
