/* scoreboard.c: the pool's slots (see scoreboard.h). */
#define _GNU_SOURCE
#include "scoreboard.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

/* Published: any process of the pool may read and write it. */
struct shared_slot {
	_Atomic int pid;
	_Atomic int executing;
	_Atomic int64_t deadline_ms;
};

/* The master's own: what it signals and respawns by. */
struct master_slot {
	pid_t pid;
	int64_t started_ms;
	bool hung; /* the master SIGKILLed it as hung */
};

struct scoreboard {
	int n_slots;
	size_t size;
	struct shared_slot *shared; /* the mapping */
	struct master_slot *own;
};

struct scoreboard *scoreboard_create(int n_slots)
{
	size_t size = (size_t)n_slots * sizeof(struct shared_slot);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		log_msg("scoreboard: cannot map %zu bytes: %s", size, strerror(errno));
		return NULL;
	}
	struct scoreboard *sb = xcalloc(1, sizeof *sb);
	sb->n_slots = n_slots;
	sb->size = size;
	sb->shared = p; /* zero-filled by the kernel: every slot empty */
	sb->own = xcalloc((size_t)n_slots, sizeof *sb->own);
	return sb;
}

void scoreboard_destroy(struct scoreboard *sb)
{
	if (!sb)
		return;
	munmap(sb->shared, sb->size);
	free(sb->own);
	free(sb);
}

int scoreboard_slots(const struct scoreboard *sb)
{
	return sb ? sb->n_slots : 0;
}

static bool has(const struct scoreboard *sb, int slot)
{
	return sb && slot >= 0 && slot < sb->n_slots;
}

/* Only the pid is published: the new worker may already have claimed the
 * slot for a request (the fork returns to both at once); scoreboard_gone
 * cleared the rest when the previous worker died. */
void scoreboard_spawned(struct scoreboard *sb, int slot, pid_t pid)
{
	if (!has(sb, slot))
		return;
	sb->own[slot] = (struct master_slot){.pid = pid, .started_ms = now_ms()};
	atomic_store(&sb->shared[slot].pid, (int)pid);
}

void scoreboard_gone(struct scoreboard *sb, int slot)
{
	if (!has(sb, slot))
		return;
	sb->own[slot].pid = 0;
	sb->own[slot].hung = false;
	atomic_store(&sb->shared[slot].executing, 0);
	atomic_store(&sb->shared[slot].deadline_ms, 0);
	atomic_store(&sb->shared[slot].pid, 0);
}

pid_t scoreboard_pid(const struct scoreboard *sb, int slot)
{
	return has(sb, slot) ? sb->own[slot].pid : 0;
}

int64_t scoreboard_started_ms(const struct scoreboard *sb, int slot)
{
	return has(sb, slot) ? sb->own[slot].started_ms : 0;
}

void scoreboard_planned_exit(struct scoreboard *sb, int slot)
{
	if (has(sb, slot))
		sb->own[slot].started_ms = 0;
}

void scoreboard_mark_hung(struct scoreboard *sb, int slot)
{
	if (has(sb, slot))
		sb->own[slot].hung = true;
}

bool scoreboard_hung(const struct scoreboard *sb, int slot)
{
	return has(sb, slot) && sb->own[slot].hung;
}

void scoreboard_busy(struct scoreboard *sb, int slot, int64_t deadline_ms)
{
	if (has(sb, slot))
		atomic_store(&sb->shared[slot].deadline_ms, deadline_ms);
}

int64_t scoreboard_deadline(const struct scoreboard *sb, int slot)
{
	return has(sb, slot) ? atomic_load(&sb->shared[slot].deadline_ms) : 0;
}

struct scoreboard_counts scoreboard_count(const struct scoreboard *sb)
{
	struct scoreboard_counts n = {0};
	for (int i = 0; sb && i < sb->n_slots; i++) {
		n.alive += atomic_load(&sb->shared[i].pid) > 0;
		n.executing += atomic_load(&sb->shared[i].executing) != 0;
	}
	return n;
}

bool scoreboard_claim_execution(struct scoreboard *sb, int slot, int max)
{
	if (!has(sb, slot))
		return true;
	/* Store, then count (both sequentially consistent): of two racing
	 * workers, at least one sees the other's mark. */
	atomic_store(&sb->shared[slot].executing, 1);
	if (max > 0 && scoreboard_count(sb).executing > max) {
		atomic_store(&sb->shared[slot].executing, 0);
		return false;
	}
	return true;
}

void scoreboard_release_execution(struct scoreboard *sb, int slot)
{
	if (has(sb, slot))
		atomic_store(&sb->shared[slot].executing, 0);
}
