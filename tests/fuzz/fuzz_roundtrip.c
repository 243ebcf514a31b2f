/*
 * fuzz_roundtrip.c: the printer's round trip, down to the bits computed.
 *
 * The input is a graph, tiled or not.  What parses and verifies (g1) is
 * printed, parsed again (g2) and printed again: the two prints must be the
 * same text (DESIGN §2).  Then the two graphs must compute the same bits,
 * NaN payloads and signs included: the text is the whole program, so
 * nothing the printer leaves out (a constant's last bit, a NaN's sign, an
 * attribute equal to a default it does not have) may change a result.
 * Both are run on the same inputs (aicm-run's: random by name, a const its
 * splat) by the reference interpreter when nothing is tiled, and by the
 * tile executor after lower-tiled (what aicm-run runs); the lowered graphs
 * must also print alike, since a pass sees only what the text says.  A
 * graph that is untyped gets shape-infer first, in both.  Sizes and work
 * are bounded before anything runs, as in fuzz_tile.
 */
#include <stdint.h>

#include "fuzz_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses and verifies text; NULL when it does not (a failure when must). */
static Graph *
load(const char *text, size_t len, bool must, Diag *d)
{
	Graph *g = parse_graph(text, len, 1, d);

	if (g && ir_verify(g, d) != 0) {
		ir_graph_free(g);
		g = NULL;
	}
	if (!g && must)
		fuzz_fail("the printed graph does not parse or verify a second time", text, NULL);
	return g;
}

/* shape-infer (when untyped) and lower-tiled (when something is left), as
 * aicm-run does; the outcome must be the same for both graphs. */
static int
prepare(Graph *g, bool lower, Diag *d)
{
	if (fuzz_untyped(g) && fuzz_run_pipeline(g, "shape-infer", NULL, false, d) != 0)
		return -1;
	if (lower && fuzz_unlowered(g) && fuzz_run_pipeline(g, "lower-tiled", NULL, false, d) != 0)
		return -1;
	return 0;
}

/* The two graphs print alike (after the same passes). */
static void
same_print(const Graph *a, const Graph *b, const char *what)
{
	size_t n1, n2;
	char *s1 = ir_print_str(a, &n1), *s2 = ir_print_str(b, &n2);

	if (n1 != n2 || memcmp(s1, s2, n1) != 0)
		fuzz_fail(what, s1, s2);
	free(s1);
	free(s2);
}

/* Runs a and b on one engine (the interpreter, or the tile executor on
 * one thread) and compares every value bit for bit.  da and db hold the
 * texts a and b were parsed from (diagnostics quote them). */
static void
run_both(const Graph *a, const Graph *b, bool tile, Diag *da, Diag *db)
{
	Tensor *va = xcalloc((size_t)a->nnodes + 1, sizeof *va);
	Tensor *vb = xcalloc((size_t)b->nnodes + 1, sizeof *vb);
	TilePlan *pa = NULL, *pb = NULL;
	int nerr = da->nerr, ra, rb;

	fuzz_fill(a, va, 0x5a);
	fuzz_fill(b, vb, 0x5a);
	if (tile) {
		pa = exec_tile_compile(a, da);
		pb = exec_tile_compile(b, db);
		if (!pa != !pb)
			fuzz_fail("the tile executor compiles one graph and refuses the other",
			    ir_print_str(a, NULL), ir_print_str(b, NULL));
		ra = pa ? exec_tile_run(pa, va, 1, da) : -1;
		rb = pb ? exec_tile_run(pb, vb, 1, db) : -1;
	} else {
		ra = exec_interp(a, va, da);
		rb = exec_interp(b, vb, db);
	}
	if (ra != rb)
		fuzz_fail("one graph runs and the other does not", ir_print_str(a, NULL),
		    ir_print_str(b, NULL));
	if (ra != 0 && da->nerr == nerr)
		fuzz_fail("a run failed without an error", ir_print_str(a, NULL), NULL);
	if (ra == 0)
		fuzz_same_bits(a, va, 0x5a, b, vb, 0x5a, tile ?
		    "the tile executor on the graph as parsed and as reprinted" :
		    "the reference interpreter on the graph as parsed and as reprinted");
	exec_tile_free(pa);
	exec_tile_free(pb);
	exec_tensors_free(va, a->nnodes);
	exec_tensors_free(vb, b->nnodes);
	free(va);
	free(vb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	ExecLimits lim = {FUZZ_MAX_BYTES, FUZZ_MAX_TOTAL};
	Graph *g1, *g2 = NULL, *l1 = NULL, *l2 = NULL;
	char *s1 = NULL;
	size_t n1 = 0;
	bool interp;
	Diag d, d2;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d, "fuzz", text, size, fuzz_sink());
	if (!(g1 = load(text, size, false, &d)))
		goto out;
	g2 = fuzz_reparse(g1, &s1, &n1);
	diag_init(&d2, "reprinted", s1, n1, fuzz_sink());
	if ((prepare(g1, false, &d) != 0) != (prepare(g2, false, &d2) != 0))
		fuzz_fail("shape-infer takes one graph and refuses the other", text, s1);
	if (fuzz_untyped(g1))
		goto out;
	same_print(g1, g2, "the graph as parsed and as reprinted differ after shape-infer");
	interp = !fuzz_has_tiled(g1);
	/* The lowered copies, from the input's text and from its print. */
	l1 = load(text, size, true, &d);
	l2 = load(s1, n1, true, &d2);
	if ((prepare(l1, true, &d) != 0) != (prepare(l2, true, &d2) != 0))
		fuzz_fail("lower-tiled takes one graph and refuses the other", text, s1);
	if (fuzz_untyped(l1) || fuzz_unlowered(l1)) {
		ir_graph_free(l1);
		ir_graph_free(l2);
		l1 = l2 = NULL;
	} else {
		same_print(l1, l2, "the graph as parsed and as reprinted lower differently");
	}
	/* The reprinted graphs print as these do, so they are as large; and
	 * d quotes the input's text, not the print. */
	{
		const Graph *gs[2] = {g1, l1};

		if (exec_check_limits(gs, l1 ? 2 : 1, &lim, &d) != 0 ||
		    (interp && fuzz_graph_work(g1) > FUZZ_MAX_WORK) ||
		    (l1 && fuzz_tile_work(l1) > FUZZ_MAX_WORK))
			goto out;
	}
	if (interp)
		run_both(g1, g2, false, &d, &d2);
	if (l1)
		run_both(l1, l2, true, &d, &d2);
out:
	ir_graph_free(g1);
	ir_graph_free(g2);
	ir_graph_free(l1);
	ir_graph_free(l2);
	if (s1)
		diag_free(&d2);
	free(s1);
	diag_free(&d);
	return 0;
}
