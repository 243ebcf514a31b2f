/*
 * check_fuse.c: the fuse pass's partition on small graphs, its options,
 * explain's remarks, the report, kernel naming, and its speed on long
 * chains and wide fans (DESIGN §6).  The goldens in testdata/fuse show the
 * printed result; these tests pin the partition itself, by kernel
 * membership, so a change in the algorithm's order shows as a named case.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "parse.h"
#include "pass.h"
#include "../passes/passes.h"

/* The result of one run: the graph (NULL if anything failed), what the
 * pass printed to the report stream, and the diagnostics, recorded. */
typedef struct Run {
	Graph *g;
	char *report;
	Diag d;
	int rc;
} Run;

static void
run_pipeline(Run *r, const char *src, const char *pipeline, bool json)
{
	Pipeline pl;
	size_t n = 0;
	FILE *rep = open_memstream(&r->report, &n);
	PassRun pr = {.verify_each = true, .report = rep, .report_json = json};

	memset(&r->d, 0, sizeof r->d);
	diag_init(&r->d, "t.aicm", src, strlen(src), stderr);
	r->d.collect = true;
	r->g = parse_graph(src, strlen(src), 1, &r->d);
	ck_assert_ptr_nonnull(r->g);
	ck_assert_int_eq(ir_verify(r->g, &r->d), 0);
	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, pipeline, &pl, stderr, "check"), 0);
	r->rc = pass_run_pipeline(r->g, &pl, &pr, &r->d);
	pass_free_pipeline(&pl);
	fclose(rep);
}

static void
run_free(Run *r)
{
	for (int i = 0; i < r->d.nrecs; i++)
		free(r->d.recs[i].msg);
	r->d.nrecs = 0;
	diag_free(&r->d);
	ir_graph_free(r->g);
	free(r->report);
}

/* "kind:a,b,c" for the kernel holding value name, or "-" outside any. */
static const char *
kernel_of(const Graph *g, const char *name, char *buf, size_t n)
{
	int i = ir_lookup(g, name), m;
	const Kernel *k;

	ck_assert_int_ge(i, 0);
	if (g->nodes[i].kernel < 0)
		return "-";
	k = &g->kernels[g->nodes[i].kernel];
	m = snprintf(buf, n, "%s:", ir_kernel_kinds[k->kind]);
	for (int j = k->first; j <= k->last; j++)
		m += snprintf(buf + m, n - (size_t)m, "%s%s", j > k->first ? "," : "",
		    g->nodes[j].name);
	return buf;
}

#define ck_kernel(g, name, want) do { \
	char kb_[512]; \
	ck_assert_str_eq(kernel_of((g), (name), kb_, sizeof kb_), (want)); \
} while (0)

static int
nremarks(const Run *r)
{
	int n = 0;

	for (int i = 0; i < r->d.nrecs; i++)
		n += r->d.recs[i].sev == SEV_REMARK;
	return n;
}


static const char *softmax =
    "graph {\n"
    "  %x = input() : (8, 32)\n"
    "  %m = max(%x) axis=-1 keepdims=True\n"
    "  %s = sub(%x, %m)\n"
    "  %e = exp(%s)\n"
    "  %t = sum(%e) axis=-1 keepdims=True\n"
    "  %y = div(%e, %t)\n"
    "}\n";

/* ---- the partition --------------------------------------------------- */

START_TEST(test_fuse_seed)
{
	Run r;

	run_pipeline(&r, ck_seed_text, "shape-infer,fuse", false);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "relu", "matmul_epilogue:mm,bias_add,relu,rowsum");
	ck_assert_str_eq(r.g->kernels[0].name, "kernel0");
	ck_assert_ptr_nonnull(strstr(r.report,
	    "  kernel0 [matmul_epilogue] %mm -> %bias_add -> %relu -> %rowsum\n"
	    "  4 compute nodes -> 1 kernel\n"));
	ck_assert_int_eq(nremarks(&r), 0);
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_diamond)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n  %b = exp(%a)\n"
	    "  %c = neg(%a)\n  %d = add(%b, %c)\n}\n", "shape-infer,fuse", false);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "a", "elementwise:a,b,c,d");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_fork)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n  %b = exp(%a)\n"
	    "  %c = neg(%a)\n}\n", "shape-infer,fuse", false);
	ck_assert_int_eq(r.g->nkernels, 3);
	ck_kernel(r.g, "a", "elementwise:a");
	ck_kernel(r.g, "b", "elementwise:b");
	ck_kernel(r.g, "c", "elementwise:c");
	run_free(&r);
}
END_TEST

/* add(%a, %a): one consumer, used twice, is still one consumer. */
START_TEST(test_fuse_same_operand_twice)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n  %b = add(%a, %a)\n}\n",
	    "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "b", "elementwise:a,b");
	ck_assert_int_eq(nremarks(&r), 0);
	run_free(&r);
}
END_TEST

/* Compares, where (three operands, one repeated in its last two places)
 * and cast fuse like any elementwise op, whatever their element types:
 * one kernel, its root a bool, no edge left. */
START_TEST(test_fuse_compare_where_cast)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4) f32\n  %y = input() : (4,) f32\n"
	    "  %a = relu(%x)\n  %c = less(%a, %y)\n  %w = where(%c, %a, %a)\n"
	    "  %d = cast(%w) to=f64\n  %n = isnan(%d)\n  %k = not(%n)\n"
	    "  %e = and(%k, %c)\n}\n", "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "e", "elementwise:a,c,w,d,n,k,e");
	ck_assert_int_eq(r.g->nodes[ir_lookup(r.g, "e")].type.dt, DT_BOOL);
	ck_assert_int_eq(nremarks(&r), 0);
	run_free(&r);
}
END_TEST

/* Breadth-first from the root, producers in operand order: with room for
 * one more op, %b (operand 0) joins and %c does not. */
START_TEST(test_fuse_order_under_max_ops)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %c = neg(%x)\n  %b = relu(%x)\n"
	    "  %d = add(%b, %c)\n}\n", "shape-infer,fuse{max-ops=2}", false);
	ck_assert_int_eq(r.g->nkernels, 2);
	ck_kernel(r.g, "d", "elementwise:b,d");
	ck_kernel(r.g, "c", "elementwise:c");
	/* printed order: %c's kernel first, so it is kernel0 */
	ck_assert_str_eq(r.g->kernels[0].name, "kernel0");
	ck_assert_str_eq(r.g->nodes[r.g->kernels[0].last].name, "c");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_max_ops_chain)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4,)\n  %a1 = relu(%x)\n  %a2 = exp(%a1)\n"
	    "  %a3 = neg(%a2)\n  %a4 = abs(%a3)\n  %a5 = tanh(%a4)\n}\n",
	    "shape-infer,fuse{max-ops=2}", false);
	ck_assert_int_eq(r.g->nkernels, 3);
	ck_kernel(r.g, "a1", "elementwise:a1");
	ck_kernel(r.g, "a2", "elementwise:a2,a3");
	ck_kernel(r.g, "a5", "elementwise:a4,a5");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_softmax_row_fusion)
{
	Run r;

	run_pipeline(&r, softmax, "shape-infer,fuse", false);
	ck_assert_int_eq(r.g->nkernels, 4);
	ck_kernel(r.g, "m", "reduction:m");
	ck_kernel(r.g, "e", "elementwise:s,e");
	ck_kernel(r.g, "t", "reduction:t");
	ck_kernel(r.g, "y", "elementwise:y");
	run_free(&r);
	run_pipeline(&r, softmax, "shape-infer,fuse{row-fusion=true}", false);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "y", "row_reduction:m,s,e,t,y");
	run_free(&r);
}
END_TEST

/* Row fusion needs keepdims=True and the last axis. */
START_TEST(test_fuse_row_fusion_limits)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (8, 32)\n  %m = max(%x) axis=0 keepdims=True\n"
	    "  %s = sub(%x, %m)\n}\n", "shape-infer,fuse{row-fusion=true}", false);
	ck_assert_int_eq(r.g->nkernels, 2);
	ck_kernel(r.g, "s", "elementwise:s");
	run_free(&r);
	run_pipeline(&r,
	    "graph {\n  %x = input() : (8, 32)\n  %m = max(%x) axis=-1\n"
	    "  %s = add(%m, %m)\n}\n", "shape-infer,fuse{row-fusion=true}", false);
	ck_assert_int_eq(r.g->nkernels, 2);
	run_free(&r);
	/* rows of one: %m2 reduces %m in place; a reduction whose consumers are
	 * not all elementwise stays out (the verifier would refuse the kernel) */
	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 1)\n  %m = max(%x) axis=-1 keepdims=True\n"
	    "  %m2 = sum(%m) axis=-1 keepdims=True\n  %y = add(%m2, %m)\n}\n",
	    "shape-infer,fuse{row-fusion=true}", false);
	ck_assert_int_eq(r.rc, 0);
	ck_kernel(r.g, "m", "reduction:m");
	ck_kernel(r.g, "y", "row_reduction:m2,y");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_matmul_reduce)
{
	static const char *src =
	    "graph {\n  %x = input() : (4, 6)\n  %W = const() : (6, 3)\n"
	    "  %mm = matmul(%x, %W)\n  %s = sum(%mm) axis=1\n}\n";
	Run r;

	run_pipeline(&r, src, "shape-infer,fuse", false);
	ck_assert_int_eq(r.g->nkernels, 2);
	ck_kernel(r.g, "mm", "matmul:mm");
	ck_kernel(r.g, "s", "reduction:s");
	run_free(&r);
	run_pipeline(&r, src, "shape-infer,fuse{matmul-reduce=true}", false);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_kernel(r.g, "s", "matmul_epilogue:mm,s");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_matmul_takes_no_producers)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 6)\n  %W = const() : (6, 6)\n"
	    "  %a = relu(%x)\n  %mm = matmul(%a, %W)\n  %mm2 = matmul(%mm, %W)\n}\n",
	    "shape-infer,fuse", false);
	ck_assert_int_eq(r.g->nkernels, 3);
	ck_kernel(r.g, "a", "elementwise:a");
	ck_kernel(r.g, "mm", "matmul:mm");
	ck_kernel(r.g, "mm2", "matmul:mm2");
	run_free(&r);
}
END_TEST

/* Nodes move to their root's place and operands follow: SSA holds, the
 * return list follows its values. */
START_TEST(test_fuse_reorder_keeps_ssa)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n  %y = input() : (4, 4)\n"
	    "  %b = neg(%y)\n  %c = add(%a, %b)\n  %d = exp(%y)\n  return %c, %d\n}\n",
	    "shape-infer,fuse", false);
	ck_assert_int_eq(r.rc, 0);
	ck_kernel(r.g, "c", "elementwise:a,b,c");
	ck_assert_str_eq(r.g->nodes[r.g->ret[0]].name, "c");
	ck_assert_str_eq(r.g->nodes[r.g->ret[1]].name, "d");
	for (int i = 0; i < r.g->nnodes; i++)
		for (int j = 0; j < r.g->nodes[i].nin; j++)
			ck_assert_int_lt(r.g->nodes[i].in[j], i);
	run_free(&r);
}
END_TEST

/* A kernel whose ops are interleaved with another's moves (the in-place
 * reorder walks a real cycle): after fuse every name still finds its node
 * and every operand its value. */
START_TEST(test_fuse_reorder_interleaved)
{
	Run r;
	const char *order[] = {"x", "o", "a", "c"};

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n  %o = neg(%x)\n"
	    "  %c = tanh(%a)\n  return %o, %c\n}\n", "shape-infer,fuse", false);
	ck_assert_int_eq(r.rc, 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_str_eq(r.g->nodes[i].name, order[i]);
		ck_assert_int_eq(ir_lookup(r.g, order[i]), i);
	}
	ck_kernel(r.g, "c", "elementwise:a,c");
	ck_kernel(r.g, "o", "elementwise:o");
	ck_assert_int_eq(r.g->nodes[3].in[0], 2);
	ck_assert_int_eq(r.g->ret[0], 1);
	ck_assert_int_eq(r.g->ret[1], 3);
	run_free(&r);
}
END_TEST

/* ---- naming, idempotence, hand-written kernels ------------------------ */

START_TEST(test_fuse_names_skip_given)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4, 4)\n  %a = relu(%x)\n"
	    "  kernel @kernel1 [elementwise] {\n    %b = exp(%a)\n  }\n"
	    "  %c = neg(%b)\n}\n", "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.g->nkernels, 3);
	ck_assert_str_eq(r.g->kernels[0].name, "kernel0");
	ck_assert_str_eq(r.g->kernels[1].name, "kernel1");
	ck_assert_str_eq(r.g->kernels[2].name, "kernel2");
	ck_kernel(r.g, "b", "elementwise:b");
	ck_assert_int_eq(nremarks(&r), 2);      /* %a -> %b and %b -> %c: F8 */
	ck_assert_ptr_nonnull(strstr(r.d.recs[0].msg, "[F8"));
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_idempotent)
{
	Run r;
	char *once;

	run_pipeline(&r, softmax, "shape-infer,fuse", false);
	once = ir_print_str(r.g, NULL);
	run_free(&r);
	run_pipeline(&r, once, "fuse", false);
	{
		char *twice = ir_print_str(r.g, NULL);

		ck_assert_str_eq(twice, once);
		free(twice);
	}
	run_free(&r);
	free(once);
}
END_TEST

/* ---- explain and the report ------------------------------------------ */

START_TEST(test_fuse_explain_fork)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (32, 16) f32\n  %a = relu(%x)\n  %b = exp(%a)\n"
	    "  %c = neg(%a)\n}\n", "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.d.nrecs, 4);
	ck_assert_int_eq(r.d.recs[0].sev, SEV_REMARK);
	/* %a is 2048 bytes; %c still reads it, so fusing this edge alone
	 * saves %b's read only, not the write */
	ck_assert_str_eq(r.d.recs[0].msg, "%a -> %b not fused [F1, would save 2048 bytes]: "
	    "%a has 2 consumers (%b, %c); fusing would duplicate computation");
	ck_assert_int_eq(r.d.recs[0].loc.line, 4);    /* at the operand */
	ck_assert_int_eq(r.d.recs[0].loc.col, 12);
	ck_assert_int_eq(r.d.recs[1].sev, SEV_NOTE);
	ck_assert_int_eq(r.d.recs[1].loc.line, 3);    /* at the producer */
	ck_assert_str_eq(r.d.recs[1].msg, "%a is defined here, in kernel @kernel0 [elementwise]");
	ck_assert_int_eq(r.d.recs[2].loc.line, 5);
	run_free(&r);
}
END_TEST

/* Many consumers: the list stops at four. */
START_TEST(test_fuse_explain_many_consumers)
{
	Run r;

	run_pipeline(&r,
	    "graph {\n  %x = input() : (4,)\n  %a = relu(%x)\n  %b1 = exp(%a)\n  %b2 = exp(%a)\n"
	    "  %b3 = exp(%a)\n  %b4 = exp(%a)\n  %b5 = exp(%a)\n}\n",
	    "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(nremarks(&r), 5);
	ck_assert_ptr_nonnull(strstr(r.d.recs[0].msg,
	    "%a has 5 consumers (%b1, %b2, %b3, %b4, ...)"));
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_report_json)
{
	Run r;

	run_pipeline(&r, ck_seed_text, "shape-infer,fuse", true);
	/* the one JSON style of every report (ir_json_str): compact, one line */
	ck_assert_str_eq(r.report, "{\"pass\":\"fuse\",\"compute_nodes\":4,\"kernels\":"
	    "[{\"kernel\":\"kernel0\",\"kind\":\"matmul_epilogue\",\"from_input\":false,"
	    "\"ops\":[\"mm\",\"bias_add\",\"relu\",\"rowsum\"]}],\"unfused_edges\":0,"
	    "\"unfused_bytes\":0,\"rules\":{}}\n");
	run_free(&r);
}
END_TEST

START_TEST(test_fuse_needs_shapes)
{
	Run r;

	run_pipeline(&r, ck_seed_text, "fuse", false);
	ck_assert_int_eq(r.rc, -1);
	ck_assert_int_eq(r.d.nerr, 1);
	ck_assert_str_eq(r.d.recs[0].msg,
	    "%mm has no shape; run shape-infer first (--pass=shape-infer,fuse)");
	run_free(&r);
}
END_TEST

/* ---- the verifier holds fuse's output and hand-written kernels -------- */

START_TEST(test_fuse_verifier_rejects)
{
	char *msgs;
	Graph *g = ck_parse(
	    "graph {\n  %x = input() : (4, 4)\n  kernel @k [elementwise] {\n"
	    "    %r = sum(%x) axis=1\n  }\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "kernel '@k' is [elementwise] but holds '%r', an op 'sum'"));
	free(msgs);
	g = ck_parse(
	    "graph {\n  %x = input() : (4, 4)\n  kernel @k [elementwise] {\n"
	    "    %a = relu(%x)\n    %b = exp(%a)\n  }\n  %c = neg(%a)\n}\n", &msgs);
	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "'%a' is used outside kernel '@k'"));
	free(msgs);
}
END_TEST

/* ---- size: linear in the graph --------------------------------------- */

static char *
chain_src(int n)
{
	size_t cap = (size_t)n * 40 + 64, m = 0;
	char *s = malloc(cap);

	m += (size_t)snprintf(s + m, cap - m, "graph {\n  %%v0 = input() : (4,)\n");
	for (int i = 1; i <= n; i++)
		m += (size_t)snprintf(s + m, cap - m, "  %%v%d = relu(%%v%d)\n", i, i - 1);
	snprintf(s + m, cap - m, "}\n");
	return s;
}

/* 100k ops, one kernel each (max-ops=1): 100k kernels to name, place and
 * verify; quadratic anywhere would take minutes, not a second. */
/* ---- the attention kind (DESIGN section 13) ---------------------------- */

/* softmax(q·kᵀ/4 [+ mask]) · v; {X} is replaced by extra lines */
static char *
attention_src(const char *scores, const char *extra)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	fprintf(f, "graph {\n  %%q = input() : (2, 10, 8)\n  %%k = input() : (2, 12, 8)\n"
	    "  %%v = input() : (2, 12, 4)\n  %%c = const() : () value=4\n"
	    "  %%mask = input() : (10, 12)\n  %%x = input() : ()\n"
	    "  %%kt = transpose(%%k) perm=(0, 2, 1)\n  %%qk = matmul(%%q, %%kt)\n"
	    "  %%t = %s\n  %%m = max(%%t) axis=-1 keepdims=True\n  %%d = sub(%%t, %%m)\n"
	    "  %%e = exp(%%d)\n  %%z = sum(%%e) axis=2 keepdims=True\n  %%p = div(%%e, %%z)\n"
	    "  %%o = matmul(%%p, %%v)\n%s}\n", scores, extra);
	fclose(f);
	return s;
}

START_TEST(test_fuse_attention)
{
	static const struct {
		const char *scores, *extra, *pipe;
		const char *want;          /* %o's kernel */
	} cases[] = {
		{"div(%qk, %c)", "", "shape-infer,fuse",
		    "attention:kt,qk,t,m,d,e,z,p,o"},
		{"add(%mask, %qk)", "", "shape-infer,fuse",
		    "attention:kt,qk,t,m,d,e,z,p,o"},
		/* off: the v1 partition (the last matmul alone) */
		{"div(%qk, %c)", "", "shape-infer,fuse{attention=false}", "matmul:o"},
		/* a scale whose value comes at run time is no scale */
		{"mul(%qk, %x)", "", "shape-infer,fuse", "matmul:o"},
		/* a member read outside the pattern, or returned */
		{"div(%qk, %c)", "  %u = neg(%e)\n  return %o, %u\n", "shape-infer,fuse",
		    "matmul:o"},
		{"div(%qk, %c)", "  return %o, %p\n", "shape-infer,fuse", "matmul:o"},
		/* max-ops below the pattern's 9 ops */
		{"div(%qk, %c)", "", "shape-infer,fuse{max-ops=8}", "matmul:o"},
		{"div(%qk, %c)", "", "shape-infer,fuse{max-ops=9}",
		    "attention:kt,qk,t,m,d,e,z,p,o"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *src = attention_src(cases[i].scores, cases[i].extra);
		Run r;

		run_pipeline(&r, src, cases[i].pipe, false);
		ck_assert_msg(r.rc == 0, "case %zu", i);
		ck_kernel(r.g, "o", cases[i].want);
		run_free(&r);
		free(src);
	}
}
END_TEST

/* The edges into an attention kernel are remarked F4i, and the kernel
 * runs equal to the reference (aicm-run's goldens check the values). */
START_TEST(test_fuse_attention_explain)
{
	char *src = attention_src("div(%qk, %c)", "  %w = relu(%q)\n  %y = exp(%o)\n"
	    "  return %y, %w\n");
	Run r;
	bool saw_in = false, saw_out = false;

	/* %q feeds the attention kernel and relu: F1 before F4i; %o feeds exp */
	run_pipeline(&r, src, "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.rc, 0);
	ck_kernel(r.g, "o", "attention:kt,qk,t,m,d,e,z,p,o");
	ck_kernel(r.g, "y", "elementwise:y");
	for (int i = 0; i < r.d.nrecs; i++) {
		const char *m = r.d.recs[i].msg;

		saw_out |= strstr(m, "%o -> %y not fused [F4i") != NULL &&
		    strstr(m, "%o is the root of the attention kernel of %o") != NULL;
		saw_in |= strstr(m, "%q -> %qk") != NULL;
	}
	ck_assert(saw_out);
	ck_assert(!saw_in);          /* %q is an input: a source, not remarked */
	run_free(&r);
	free(src);
}
END_TEST

START_TEST(test_fuse_long_chain)
{
	char *src = chain_src(100000);
	Run r;

	run_pipeline(&r, src, "shape-infer,fuse{max-ops=1}", true);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(r.g->nkernels, 100000);
	ck_assert_str_eq(r.g->kernels[99999].name, "kernel99999");
	run_free(&r);
	run_pipeline(&r, src, "shape-infer,fuse", false);
	ck_assert_int_eq(r.g->nkernels, 1);
	ck_assert_int_eq(r.g->kernels[0].last - r.g->kernels[0].first, 99999);
	run_free(&r);
	free(src);
}
END_TEST

/* One value, 50k consumers: explain lists them without walking the fan
 * once per edge. */
START_TEST(test_fuse_wide_fan)
{
	int n = 50000;
	size_t cap = (size_t)n * 40 + 64, m = 0;
	char *s = malloc(cap);
	Run r;

	m += (size_t)snprintf(s + m, cap - m, "graph {\n  %%x = input() : (4,)\n  %%a = relu(%%x)\n");
	for (int i = 0; i < n; i++)
		m += (size_t)snprintf(s + m, cap - m, "  %%b%d = exp(%%a)\n", i);
	snprintf(s + m, cap - m, "}\n");
	run_pipeline(&r, s, "shape-infer,fuse{explain=true}", false);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(r.g->nkernels, n + 1);
	ck_assert_int_eq(nremarks(&r), n);
	run_free(&r);
	free(s);
}
END_TEST

Suite *
make_fuse_suite(void)
{
	Suite *s = suite_create("fuse");
	TCase *tc = tcase_create("partition");

	tcase_add_test(tc, test_fuse_seed);
	tcase_add_test(tc, test_fuse_diamond);
	tcase_add_test(tc, test_fuse_fork);
	tcase_add_test(tc, test_fuse_same_operand_twice);
	tcase_add_test(tc, test_fuse_compare_where_cast);
	tcase_add_test(tc, test_fuse_order_under_max_ops);
	tcase_add_test(tc, test_fuse_max_ops_chain);
	tcase_add_test(tc, test_fuse_softmax_row_fusion);
	tcase_add_test(tc, test_fuse_row_fusion_limits);
	tcase_add_test(tc, test_fuse_matmul_reduce);
	tcase_add_test(tc, test_fuse_matmul_takes_no_producers);
	tcase_add_test(tc, test_fuse_reorder_keeps_ssa);
	tcase_add_test(tc, test_fuse_reorder_interleaved);
	suite_add_tcase(s, tc);
	tc = tcase_create("kernels");
	tcase_add_test(tc, test_fuse_names_skip_given);
	tcase_add_test(tc, test_fuse_idempotent);
	tcase_add_test(tc, test_fuse_verifier_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("explain");
	tcase_add_test(tc, test_fuse_explain_fork);
	tcase_add_test(tc, test_fuse_explain_many_consumers);
	tcase_add_test(tc, test_fuse_report_json);
	tcase_add_test(tc, test_fuse_needs_shapes);
	suite_add_tcase(s, tc);
	tc = tcase_create("size");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fuse_attention);
	tcase_add_test(tc, test_fuse_attention_explain);
	tcase_add_test(tc, test_fuse_long_chain);
	tcase_add_test(tc, test_fuse_wide_fan);
	suite_add_tcase(s, tc);
	return s;
}
