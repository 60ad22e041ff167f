// spread_resident: the whole spreading activation in one call to the kg.* procedure plugin
// (neo4j-plugin/, kg.spreadLists), instead of one spread_step round trip per hop. Same
// energies as the embedded store; used only when the server has the plugin (plugin_procedures).
// parameters: $seeds (map node id -> start energy, e0 applied), $tau (map kind -> float),
//             $epsilon, $max_hops, $max_fanout (0 = off), $max_fire (0 = off),
//             $degree_damping (float, 0 = off), $seed_backflow (bool)
// returns: one row: nodes (activated node ids), energies (their totals, same order), hops
CALL kg.spreadLists($seeds, $tau, $epsilon, $max_hops, $max_fanout, $max_fire, $degree_damping, $seed_backflow)
YIELD nodes, energies, hops
RETURN nodes, energies, hops
