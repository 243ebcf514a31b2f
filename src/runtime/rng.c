/*
 * rng.c: the documented random generator for inputs and constants.
 *
 * Every value gets its own splitmix64 stream, seeded from --seed and the
 * value's name, so adding an input changes no other input, and the stream
 * is plain 64-bit integer arithmetic, so it is the same on every platform
 * (docs/run.md gives the formula and a numpy transcription):
 *
 *   state = seed * 0x9E3779B97F4A7C15 ^ fnv1a64(name)        (mod 2^64)
 *   per element: state += 0x9E3779B97F4A7C15; z = mix(state)
 *   f64: (z >> 11) * 2^-53 * 2 - 1      f32: (z >> 40) * 2^-24 * 2 - 1
 *
 * Both conversions are exact, so the values lie in [-1, 1); f32 takes the
 * top 24 bits because rounding a 53-bit value could reach 1.0f.  Integers
 * (i32, i64) are z >> 61, uniform in [0, 8), and bools z >> 63, a fair
 * coin (DESIGN §12): the top bits, the best mixed ones, from the same
 * stream, so a value keeps its seeding whatever its type.
 */
#include "exec.h"

#define SM_GAMMA 0x9E3779B97F4A7C15ULL

uint64_t
exec_fnv1a64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += SM_GAMMA);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

void
exec_fill_random(Tensor *t, uint64_t seed, const char *name)
{
	uint64_t st = seed * SM_GAMMA ^ exec_fnv1a64(name);

	if (!ir_dtype_is_float(t->dt)) {
		int shift = t->dt == DT_BOOL ? 63 : 61;

		for (int64_t i = 0; i < t->numel; i++)
			exec_seti(t, i, (int64_t)(splitmix64(&st) >> shift));
	} else if (t->dt == DT_F32) {
		float *p = t->data;

		for (int64_t i = 0; i < t->numel; i++)
			p[i] = (float)((double)(splitmix64(&st) >> 40) * 0x1p-23 - 1.0);
	} else {
		double *p = t->data;

		for (int64_t i = 0; i < t->numel; i++)
			p[i] = (double)(splitmix64(&st) >> 11) * 0x1p-52 - 1.0;
	}
}

void
exec_fill_splat(Tensor *t, double v)
{
	for (int64_t i = 0; i < t->numel; i++)
		exec_set(t, i, v);
}

bool
exec_fill_const(Tensor *t, const Node *n)
{
	bool exact = !ir_dtype_is_float(t->dt);

	if (n->op != OP_CONST)
		return false;
	if (n->at.set & AB(VALUE)) {
		if (exact && n->at.value_int)
			for (int64_t i = 0; i < t->numel; i++)
				exec_seti(t, i, n->at.ivalue);
		else
			exec_fill_splat(t, n->at.value);
		return true;
	}
	if (n->at.set & AB(VALUES)) {
		for (int64_t e = 0; e < t->numel && e < n->at.nvalues; e++) {
			if (exact && !(n->at.values_float >> e & 1))
				exec_seti(t, e, n->at.ivalues[e]);
			else
				exec_set(t, e, n->at.values[e]);
		}
		return true;
	}
	return false;
}
