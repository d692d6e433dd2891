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

; The stack of a caught exception: `catch (e) { e.stack }`, `.catch((e) => e.stack)`.
((member_expression
   object: (identifier)
   property: (property_identifier) @member) @read
  (#eq? @member "stack")
  (#caught? @read))

((subscript_expression
   object: (identifier)
   index: (string (string_fragment) @member)) @read
  (#eq? @member "stack")
  (#caught? @read))
