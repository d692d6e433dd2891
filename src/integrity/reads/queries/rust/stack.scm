; The call stack: frames, tracebacks, backtraces, the caller's location.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (scoped_identifier) (field_expression) (call_expression)] @read
  (#reads? @read
    "std.backtrace.Backtrace.capture"
    "std.backtrace.Backtrace.force_capture"
    "backtrace.Backtrace.new"
    "std.panic.Location.caller"
    "core.panic.Location.caller"))
