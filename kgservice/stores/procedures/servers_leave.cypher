// servers_leave: a kg serve that stops cleanly takes its heartbeat away at once.
// parameters: $id
// returns: nothing
MATCH (s:KgServer {id: $id}) DELETE s
