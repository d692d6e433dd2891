; The current thread's name or identity.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

; Nothing of this kind is read in this language.
