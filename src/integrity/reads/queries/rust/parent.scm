; The parent process.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (scoped_identifier) (field_expression) (call_expression)] @read
  (#reads? @read
    "std.os.unix.process.parent_id"))
