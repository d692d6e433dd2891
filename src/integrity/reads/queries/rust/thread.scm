; The current thread's name or identity.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (scoped_identifier) (field_expression) (call_expression)] @read
  (#reads? @read
    "std.thread.current().name"
    "std.thread.current().id"))
