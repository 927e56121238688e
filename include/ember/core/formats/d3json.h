/* SPDX-License-Identifier: MIT */
/*
 * d3json: a profile as the JSON tree d3-flame-graph (and dashboards built on it) draw:
 *
 *     {"name":"root","value":TOTAL,"children":[{"name":"main","value":N,"children":[...]}]}
 *
 * "value" is inclusive (the node and everything under it), as d3-flame-graph expects: a node's
 * self value is its value minus its children's. Children are sorted by name, byte order, so the
 * output is deterministic. Frames with the same name under the same parent are one node.
 */
#ifndef EMBER_D3JSON_H
#define EMBER_D3JSON_H

struct profile;
struct sbuf;

/*
 * Appends the tree of @p (first counts; stacks with a zero count are left out) to @out, with
 * @root_name (NULL: "root") as the name of the root node, then '\n'. 0 or -ENOMEM.
 */
int d3json_write_profile(const struct profile *p, const char *root_name, struct sbuf *out);

#endif
