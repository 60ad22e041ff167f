// spread_resident: the whole spreading activation in one call to the kg.* procedure plugin
// (neo4j-plugin/, kg.spreadLists), instead of one spread_step round trip per hop. Same
// energies as the embedded store; used only when the server has the plugin (plugin_procedures).
// The plugin spreads over its resident in-memory copy of the graph, kept coherent with the
// change log (docs/spreading.md "Resident graph"); engine 'walk' reads the store instead.
// parameters: $seeds (map node id -> start energy, e0 applied), $tau (map kind -> float),
//             $epsilon, $max_hops, $max_fanout (0 = off), $max_fire (0 = off),
//             $degree_damping (float, 0 = off), $seed_backflow (bool),
//             $limit (0 = every activated node; N = the N most energetic, ties by id, plus unknown seeds),
//             $engine ('auto' | 'resident' | 'walk'), $ws (the workspace: its own resident graph)
// returns: one row: nodes (node ids), energies (their totals, same order), hops,
//          activated (how many nodes were activated in all)
CALL kg.spreadLists($seeds, $tau, $epsilon, $max_hops, $max_fanout, $max_fire, $degree_damping, $seed_backflow,
                    $limit, $engine, $ws)
YIELD nodes, energies, hops, activated
RETURN nodes, energies, hops, activated
