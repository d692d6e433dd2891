; The call stack: frames, tracebacks, backtraces, the caller's location.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (member_expression) (subscript_expression) (call_expression)] @read
  (#reads? @read
    "Error().stack"
    "Error.captureStackTrace"
    "Error.prepareStackTrace"
    "Error.stackTraceLimit"
    "console.trace"
    "arguments.callee"))
