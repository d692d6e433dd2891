; The call stack: frames, tracebacks, backtraces, the caller's location.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (selector_expression) (call_expression)] @read
  (#reads? @read
    "runtime.Caller"
    "runtime.Callers"
    "runtime.Stack"
    "runtime.CallersFrames"
    "runtime.FuncForPC"
    "runtime/debug.Stack"
    "runtime/debug.PrintStack"))
