// session_drop: end one web sign-in (sign-out).
// parameters: $id
// returns: nothing
MATCH (s:KgSession {id: $id}) DELETE s
