/*
 * log: raygate's one logging module.
 *
 * Every line is one JSON object on stderr:
 *   {"ts":"2026-11-21T19:31:15.123Z","level":"info","src":"gate/main.c:42","msg":"..."}
 * Use the level macros; they stamp file:line and are printf-checked. A message
 * is made one line of valid UTF-8 (util_one_line): it may quote user input.
 * Never log a token, a key or a Secret's data.
 */
#ifndef RAYGATE_LOG_H
#define RAYGATE_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level {
    LOG_LEVEL_ERROR = 0,
    LOG_LEVEL_WARN = 1,
    LOG_LEVEL_INFO = 2,
    LOG_LEVEL_DEBUG = 3,
};

/* The levels' names, indexed by enum log_level, NULL-terminated (for the --log-level flag). */
extern const char *const log_level_names[];

/* Sets the most verbose level that is printed (default LOG_LEVEL_INFO). */
void log_set_level(enum log_level level);

/* Parses "error", "warn", "info" or "debug"; returns 0, or -1 if unknown. */
int log_level_parse(const char *name, enum log_level *level);

/* Returns non-zero if a message at this level would be printed. */
int log_enabled(enum log_level level);

/*
 * Formats one log line (with trailing newline) into buf, of at most size bytes
 * including the NUL. The message is JSON-escaped; a line that does not fit is
 * cut at a character boundary and still closed as valid JSON.
 * Returns the length written (excluding the NUL).
 */
size_t log_format_line(char *buf, size_t size, long long unix_ms, enum log_level level, const char *src, const char *msg);

/* Writes one line; use the macros below instead. */
void log_write(enum log_level level, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The source file relative to the source root ("gate/main.c"): meson.build maps
 * __FILE__'s prefix at compile time, or defines REL_SRC_DIR (the build
 * directory's path to the source root) where the compiler has no prefix map.
 */
#ifdef REL_SRC_DIR
#define LOG_FILE ((const char *)__FILE__ + sizeof(REL_SRC_DIR) - 1)
#else
#define LOG_FILE __FILE__
#endif

#define log_errorf(...) log_write(LOG_LEVEL_ERROR, LOG_FILE, __LINE__, __VA_ARGS__)
#define log_warnf(...) log_write(LOG_LEVEL_WARN, LOG_FILE, __LINE__, __VA_ARGS__)
#define log_infof(...) log_write(LOG_LEVEL_INFO, LOG_FILE, __LINE__, __VA_ARGS__)
#define log_debugf(...)                                                                                                            \
    do {                                                                                                                           \
        if (log_enabled(LOG_LEVEL_DEBUG))                                                                                          \
            log_write(LOG_LEVEL_DEBUG, LOG_FILE, __LINE__, __VA_ARGS__);                                                           \
    } while (0)

#endif
