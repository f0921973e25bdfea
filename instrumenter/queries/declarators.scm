; Names a function declares for itself (parameters and locals), run on one
; function: a parameter called `free` keeps `free(p)` a call of that
; parameter.
(parameter_declaration declarator: (_) @declarator)
(declaration declarator: (_) @declarator)
