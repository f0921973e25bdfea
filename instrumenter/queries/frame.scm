; What makes up a frame, for the site table's CALL and LOCAL sites (never
; recorded): the calls of named functions in a body, and its declarations.
(call_expression
  function: (identifier) @callee)
(declaration) @declaration
