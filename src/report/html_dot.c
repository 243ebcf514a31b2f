/*
 * html_dot.c: the graph picture of the report, drawn by Graphviz (html.h).
 *
 * aicm already writes the graph in Graphviz's language (--emit=dot); the
 * page wants it drawn, and drawing graphs well is dot's job, not ours.  So
 * dot runs as a child process, found on PATH and started without a shell
 * (posix_spawnp: no quoting to get wrong).  The text goes to dot through
 * a temporary file rather than a pipe, so that a dot that dies early
 * cannot raise SIGPIPE in the tool nor deadlock a writer waiting on a
 * reader; its SVG comes back on a pipe, read to the end before the wait.
 * dot's own complaints reach stderr unchanged.  The environment variable
 * AICM_DOT names another program to run in dot's place (a Graphviz of
 * one's own; tests name one that is missing or fails).
 *
 * The SVG is then fitted into the page (html_inline_svg): HTML5 takes an
 * inline <svg> as it is, without the XML prolog, the DOCTYPE or the
 * namespace declarations, and without them the page holds no URL at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "html.h"

extern char **environ;

/* Writes text to a fresh temporary file; its path (malloc'd) or NULL. */
static char *
temp_file(const char *text, char *why, size_t whylen)
{
	const char *dir = getenv("TMPDIR");
	size_t n = strlen(text);
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	path = xmalloc(strlen(dir) + 32);
	sprintf(path, "%s/aicm-report-XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0) {
		snprintf(why, whylen, "cannot make a temporary file in '%s': %s", dir,
		    strerror(errno));
		free(path);
		return NULL;
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, text + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(why, whylen, "cannot write '%s': %s", path, strerror(errno));
			close(fd);
			unlink(path);
			free(path);
			return NULL;
		}
		off += (size_t)w;
	}
	close(fd);
	return path;
}

char *
html_dot_svg(const char *dot, char *why, size_t whylen)
{
	posix_spawn_file_actions_t fa;
	const char *prog = getenv("AICM_DOT");
	char *path, *args[4], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd[2], rc, wst;
	pid_t pid;

	if (!prog || !*prog)
		prog = "dot";
	if (!(path = temp_file(dot, why, whylen)))
		return NULL;
	if (pipe(fd) != 0) {
		snprintf(why, whylen, "cannot make a pipe: %s", strerror(errno));
		unlink(path);
		free(path);
		return NULL;
	}
	args[0] = (char *)prog;
	args[1] = (char *)"-Tsvg";
	args[2] = path;
	args[3] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	rc = posix_spawnp(&pid, prog, &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		snprintf(why, whylen, "cannot run '%s' (Graphviz): %s", prog, rc == ENOENT ?
		    "it is not on PATH" : strerror(rc));
		close(fd[0]);
		unlink(path);
		free(path);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			buf = xrealloc(buf, cap);
		}
		r = read(fd[0], buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd[0]);
	buf[len] = '\0';
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	unlink(path);
	free(path);
	if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
		/* 127: the exec failed in the child, as a posix_spawnp built on
		 * fork and exec reports a missing program (under valgrind, say) */
		if (WIFEXITED(wst) && WEXITSTATUS(wst) == 127)
			snprintf(why, whylen, "cannot run '%s' (Graphviz): it is not on PATH", prog);
		else if (WIFEXITED(wst))
			snprintf(why, whylen, "'%s -Tsvg' failed with exit status %d", prog,
			    WEXITSTATUS(wst));
		else
			snprintf(why, whylen, "'%s -Tsvg' was killed by signal %d", prog,
			    WIFSIGNALED(wst) ? WTERMSIG(wst) : 0);
		free(buf);
		return NULL;
	}
	if (!strstr(buf, "<svg")) {
		snprintf(why, whylen, "'%s -Tsvg' wrote no <svg> element", prog);
		free(buf);
		return NULL;
	}
	return buf;
}

/* Whether p starts the attribute xmlns or xmlns:PREFIX (after a blank). */
static size_t
xmlns_attr(const char *p)
{
	const char *q = p;

	if (strncmp(q, "xmlns", 5) != 0 || (q[5] != '=' && q[5] != ':'))
		return 0;
	q += 5;
	while (*q && *q != '=' && *q != '>' && *q != ' ')
		q++;
	if (q[0] != '=' || (q[1] != '"' && q[1] != '\''))
		return 0;
	{
		const char *e = strchr(q + 2, q[1]);

		return e ? (size_t)(e + 1 - p) : 0;
	}
}

void
html_inline_svg(FILE *f, const char *svg)
{
	const char *p = strstr(svg, "<svg");
	bool in_root = true;

	if (!p)
		return;
	/* the root's opening tag, without its namespace declarations */
	for (; *p && in_root; p++) {
		size_t n;

		if (*p == '>') {
			fputc('>', f);
			in_root = false;
		} else if ((p[0] == ' ' || p[0] == '\n' || p[0] == '\t') &&
		    (n = xmlns_attr(p + 1)) > 0) {
			p += n;                 /* the blank and the attribute */
		} else {
			fputc(*p, f);
		}
	}
	fputs(p, f);
	if (*p && p[strlen(p) - 1] != '\n')
		fputc('\n', f);
}
