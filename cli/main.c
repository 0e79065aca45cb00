/*
 * kubectl-raygate: the `kubectl raygate` plugin. Shows what raygate's gate
 * controller wrote (PodGroups, Queue status, annotations, Events): queues,
 * gangs and why a gang waits.
 *
 *   kubectl raygate queues [QUEUE] [-o json|yaml|wide]
 *   kubectl raygate gangs [-n NS | -A] [--queue Q] [-o json|yaml|wide]
 *   kubectl raygate why NAME [-n NS] [-o json|yaml]
 *   kubectl raygate domains [--key LABEL | --hypernodes [--tier N]] [-o json|yaml|wide]
 *
 * kubectl hands a plugin its arguments as they are: --kubeconfig, --context
 * and -n/--namespace are read here. Exit status: 0, 1 when the API cannot be
 * read or the gang does not exist, 2 for a bad flag or command.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domains.h"
#include "error.h"
#include "fetch.h"
#include "flags.h"
#include "kube.h"
#include "kubeconfig.h"
#include "output.h"
#include "util.h"
#include "version.h"
#include "view.h"
#include "why.h"

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_YAML, FORMAT_WIDE };
static const char *const formats[] = {"table", "json", "yaml", "wide", NULL};

struct args {
    const char *command;
    const char *name; /* queues' QUEUE, why's NAME */
    const char *kubeconfig, *context, *namespace_, *queue;
    const char *key; /* domains --key */
    int all_namespaces;
    int hypernodes; /* domains --hypernodes */
    int64_t tier;   /* domains --tier (0: any) */
    int format;     /* enum format */
};

/* kubectl's short flags, as the long ones lib/core/flags reads (writable storage: getopt_long takes char **). */
static char long_namespace[] = "--namespace", long_all[] = "--all-namespaces", long_output[] = "--output", long_help[] = "--help";
static const struct {
    char letter;
    char *flag;
    int takes_value;
} shorts[] = {{'n', long_namespace, 1}, {'A', long_all, 0}, {'o', long_output, 1}, {'h', long_help, 0}};

/* The flags (long form; values point into argv) and the positional arguments of argv, apart. */
struct split {
    char **flagv;
    int flagc;
    const char *pos[3];
    int npos;
};

/* 1 when flag name[0..len) takes a value, 0 when not, -1 when there is no such flag. */
static int takes_value(const struct flag *table, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0)
            return table[i].kind != FLAG_KIND_BOOL;
    }
    return (len == 4 && strncmp(name, "help", 4) == 0) || (len == 7 && strncmp(name, "version", 7) == 0) ? 0 : -1;
}

/* One short flag argv[*i] ("-n NS", "-nNS", "-n=NS", "-A") in its long form. Returns 0, or -1 with err. */
static int split_short(struct split *s, int argc, char **argv, int *i, struct error *err)
{
    char *a = argv[*i];
    for (size_t k = 0; k < sizeof(shorts) / sizeof(shorts[0]); k++) {
        if (a[1] != shorts[k].letter || (!shorts[k].takes_value && a[2] != '\0'))
            continue;
        s->flagv[s->flagc++] = shorts[k].flag;
        if (shorts[k].takes_value && a[2] != '\0')
            s->flagv[s->flagc++] = a[2] == '=' ? a + 3 : a + 2;
        else if (shorts[k].takes_value && *i + 1 < argc)
            s->flagv[s->flagc++] = argv[++*i];
        return 0;
    }
    error_setf(err, "unknown flag %.*s (see --help)", (int)strcspn(a, "="), a);
    return -1;
}

/* Splits argv: lib/core/flags refuses positional arguments, and reads long flags only. Returns 0, or -1 with err. */
static int split_args(const struct flag *table, size_t n, int argc, char **argv, struct split *s, struct error *err)
{
    int rest = 0;
    s->flagv = util_calloc((size_t)argc + 1, sizeof(*s->flagv));
    s->flagv[s->flagc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (rest || a[0] != '-' || a[1] == '\0') {
            if (s->npos == (int)(sizeof(s->pos) / sizeof(s->pos[0]))) {
                error_setf(err, "unexpected argument \"%s\" (see --help)", a);
                return -1;
            }
            s->pos[s->npos++] = a;
        } else if (strcmp(a, "--") == 0) {
            rest = 1;
        } else if (a[1] == '-') {
            size_t len = strcspn(a + 2, "=");
            int value = takes_value(table, n, a + 2, len);
            if (value < 0) { /* lib/core/flags would take a prefix of a flag that needs a value for a missing value */
                error_setf(err, "unknown flag %.*s (see --help)", (int)len + 2, a);
                return -1;
            }
            s->flagv[s->flagc++] = argv[i];
            if (a[2 + len] == '\0' && value && i + 1 < argc)
                s->flagv[s->flagc++] = argv[++i];
        } else if (split_short(s, argc, argv, &i, err) != 0) {
            return -1;
        }
    }
    return 0;
}

static void split_finish(struct split *s)
{
    free(s->flagv);
}

static struct flags_program program_of(const struct flag *table, size_t n)
{
    struct flags_program p = {
        .name = "kubectl-raygate",
        .synopsis = "kubectl raygate queues [QUEUE] [-o json|yaml|wide]\n"
                    "       kubectl raygate gangs [-n NS | -A] [--queue Q] [-o json|yaml|wide]\n"
                    "       kubectl raygate why NAME [-n NS] [-o json|yaml]\n"
                    "       kubectl raygate domains [--key LABEL | --hypernodes [--tier N]] [-o json|yaml|wide]",
        .epilog = "Commands:\n"
                  "  queues [QUEUE]  the queue tree (QUEUE: its subtree): capability, guarantee, deserved\n"
                  "                  (derived by weight: *), what their gangs hold, share, gangs by phase\n"
                  "  gangs           the gangs: state, pods bound, position in the queue, what they wait for\n"
                  "  why NAME        why gang NAME (its RayCluster, RayJob or PodGroup name) is in its state,\n"
                  "                  and what would have to change\n"
                  "  domains         free room per topology domain (FREE/ALLOC: free/allocatable of its Ready,\n"
                  "                  schedulable nodes) and the gangs placed there; without --key or\n"
                  "                  --hypernodes: the topologies the gangs ask for\n"
                  "Short flags: -n (--namespace), -A (--all-namespaces), -o (--output), -h (--help).\n"
                  "Reads only what raygate's gate controller writes: the ClusterRole raygate-viewer\n"
                  "(manifests/cli-viewer.yaml) is all it needs.\n",
        .flags = table,
        .nflags = n,
    };
    return p;
}

/* Checks the command and its arguments; returns 0, or an exit status (reported). */
static int check_command(const struct flags_program *p, struct args *a, const struct split *s)
{
    if (s->npos == 0)
        return flags_fail(p, "a command is needed: queues, gangs, why or domains (see --help)");
    a->command = s->pos[0];
    a->name = s->npos > 1 ? s->pos[1] : NULL;
    int domains = strcmp(a->command, "domains") == 0;
    if (strcmp(a->command, "queues") != 0 && strcmp(a->command, "gangs") != 0 && strcmp(a->command, "why") != 0 && !domains)
        return flags_fail(p, "unknown command \"%s\" (queues, gangs, why, domains)", a->command);
    if (s->npos > 2 || ((strcmp(a->command, "gangs") == 0 || domains) && a->name != NULL))
        return flags_fail(p, "unexpected argument \"%s\" (see --help)", s->pos[s->npos - 1]);
    if (strcmp(a->command, "why") == 0 && a->name == NULL)
        return flags_fail(p, "why needs the gang's NAME");
    if (strcmp(a->command, "why") == 0 && a->format == FORMAT_WIDE)
        return flags_fail(p, "--output wide is for queues, gangs and domains");
    if (!domains && (a->key != NULL || a->hypernodes || a->tier != 0))
        return flags_fail(p, "%s is for domains", a->key != NULL ? "--key" : a->hypernodes ? "--hypernodes" : "--tier");
    if (a->key != NULL && (a->hypernodes || *a->key == '\0'))
        return flags_fail(p, "--key: %s", *a->key == '\0' ? "an empty label key" : "give --key or --hypernodes, not both");
    if (a->tier != 0 && !a->hypernodes)
        return flags_fail(p, "--tier needs --hypernodes");
    return 0;
}

/* Returns -1 to go on, or the exit status (0 after --help and --version, 2 after a bad flag or command). */
static int parse_args(int argc, char **argv, struct args *a)
{
    const struct flag table[] = {
        FLAG_STRING("namespace", "NS", &a->namespace_, "the namespace (default: the context's, else default)"),
        FLAG_BOOL("all-namespaces", &a->all_namespaces, "gangs of every namespace"),
        FLAG_STRING("queue", "Q", &a->queue, "gangs of queue Q only"),
        FLAG_STRING("key", "LABEL", &a->key, "domains: one per value of node label LABEL"),
        FLAG_BOOL("hypernodes", &a->hypernodes, "domains: one per Volcano HyperNode"),
        FLAG_INT("tier", "N", &a->tier, 1, INT32_MAX, "domains --hypernodes: HyperNodes of tier N or lower only"),
        FLAG_CHOICE("output", "FORMAT", formats, &a->format, "table, json, yaml or wide"),
        FLAG_STRING("kubeconfig", "FILE", &a->kubeconfig, "default $KUBECONFIG, else ~/.kube/config, else in-cluster"),
        FLAG_STRING("context", "NAME", &a->context, "the kubeconfig context"),
    };
    size_t n = sizeof(table) / sizeof(table[0]);
    struct flags_program p = program_of(table, n);
    struct split s = {0};
    struct error err = {{0}};
    int rc = split_args(table, n, argc, argv, &s, &err) != 0 ? flags_fail(&p, "%s", err.message)
                                                             : flags_handle(&p, RAYGATE_VERSION, s.flagc, s.flagv, NULL);
    if (rc < 0) {
        rc = check_command(&p, a, &s);
        rc = rc == 0 ? -1 : rc;
    }
    split_finish(&s);
    return rc;
}

/*
 * What the plugin tells its user on stderr, one line each: "kubectl-raygate:
 * <message>" (prefix "kubectl-raygate") or "warning: <message>". A user's
 * terminal, not a log: lib/io/log's JSON lines are for the daemons.
 */
static void say(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Prints b to stdout (and frees it); returns 0, or 1 if stdout fails. */
static int emit(struct util_buf *b)
{
    char *s = util_buf_take(b);
    int rc = fputs(s, stdout) == EOF || fflush(stdout) != 0 ? 1 : 0;
    free(s);
    return rc;
}

static int print_value(const json_t *v, const struct args *a, unsigned flags,
                       void (*table)(struct util_buf *, const json_t *, unsigned))
{
    struct util_buf b = {0};
    if (a->format == FORMAT_JSON) {
        output_json(&b, v);
    } else if (a->format == FORMAT_YAML) {
        if (output_yaml(&b, v) != 0) {
            util_buf_finish(&b);
            say("kubectl-raygate", "cannot write YAML");
            return 1;
        }
    } else {
        /* A list's table shows its items; -o json/yaml the whole list, as kubectl's List. */
        const json_t *items = json_object_get(v, "items");
        table(&b, items != NULL ? items : v, flags | (a->format == FORMAT_WIDE ? OUTPUT_WIDE : 0));
    }
    return emit(&b);
}

static void print_why_text(struct util_buf *b, const json_t *why, unsigned flags)
{
    output_why(b, why, flags);
}

/* The domains command's result (new) after printing it; *rc: its exit status. */
static json_t *print_domains(const json_t *snap, const struct args *a, unsigned flags, int *rc)
{
    struct domains_query q = {.key = a->key, .hypernodes = a->hypernodes, .tier = (int32_t)a->tier};
    if (q.key == NULL && !q.hypernodes) {
        json_t *v = json_pack("{s:o}", "items", domains_asked(snap));
        *rc = print_value(v, a, flags, output_asked_table);
        return v;
    }
    json_t *v = json_pack("{s:o}", "items", domains_view(snap, &q));
    *rc = print_value(v, a, flags, output_domains_table);
    return v;
}

static int run(struct kube_client *c, const struct args *a, const char *ns, unsigned flags)
{
    struct error err = {{0}};
    int gangs = strcmp(a->command, "queues") != 0, domains = strcmp(a->command, "domains") == 0;
    struct fetch_scope scope = {.what = domains ? FETCH_NODES : FETCH_QUEUES | (gangs ? FETCH_GANGS : 0),
                                .namespace_ = strcmp(a->command, "gangs") == 0 && a->all_namespaces ? NULL : ns};
    json_t *snap = fetch_snapshot(c, &scope, &err), *v = NULL, *w;
    if (snap == NULL) {
        say("kubectl-raygate", "%s", err.message);
        return 1;
    }
    long long now = (long long)time(NULL);
    int rc = 0;
    if (domains) {
        v = print_domains(snap, a, flags, &rc);
    } else if (strcmp(a->command, "queues") == 0) {
        v = json_pack("{s:o}", "items", view_queues(snap, a->name));
        rc = print_value(v, a, flags, output_queues_table);
    } else if (strcmp(a->command, "gangs") == 0) {
        struct view_filter f = {.namespace_ = scope.namespace_, .queue = a->queue};
        v = json_pack("{s:o}", "items", view_gangs(snap, now, &f));
        rc = print_value(v, a, flags, output_gangs_table);
    } else if ((w = why_explain(snap, now, ns, a->name)) == NULL) {
        say("kubectl-raygate", "no gang %s in namespace %s", a->name, ns);
        rc = 1;
    } else {
        fetch_events(c, snap, ns, json_string_value(json_object_get(json_object_get(w, "gang"), "name")));
        if (fetch_native(c, snap, ns, &err) != 0)
            say("warning", "Kubernetes' own PodGroups cannot be read: %s", err.message);
        /* A gang that waits for a topology domain: its explanation shows the room of the domains now. */
        if (view_wait_reason(json_object_get(w, "gang")) == ADMIT_REASON_TOPOLOGY && fetch_room(c, snap, &err) != 0)
            say("warning", "the room of the topology domains cannot be read: %s", err.message);
        json_decref(w);
        v = why_explain(snap, now, ns, a->name);
        rc = print_value(v, a, flags, print_why_text);
    }
    size_t i;
    json_t *msg;
    json_array_foreach(json_object_get(snap, "warnings"), i, msg) say("warning", "%s", json_string_value(msg));
    json_decref(v);
    json_decref(snap);
    return rc;
}

/* Colours only on a terminal, and never with NO_COLOR set or TERM=dumb. */
static unsigned colour_flags(void)
{
    const char *term = getenv("TERM");
    if (!isatty(STDOUT_FILENO) || getenv("NO_COLOR") != NULL || (term != NULL && strcmp(term, "dumb") == 0))
        return 0;
    return OUTPUT_COLOUR;
}

int main(int argc, char **argv)
{
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct kubeconfig cfg;
    struct error kerr = {{0}};
    struct error err = {{0}};
    kubeconfig_init(&cfg);
    char *home_config = NULL;
    const char *path = a.kubeconfig, *home = getenv("HOME");
    if (path == NULL && getenv("KUBECONFIG") == NULL && home != NULL) {
        home_config = util_strdupf("%s/.kube/config", home);
        if (access(home_config, R_OK) == 0)
            path = home_config;
    }
    if (kubeconfig_load(path, a.context, &cfg, &kerr) != 0) {
        say("kubectl-raygate", "kubeconfig: %s", kerr.message);
        free(home_config);
        return 1;
    }
    struct kube_client_options opts = {.user_agent = "kubectl-raygate/" RAYGATE_VERSION, .max_retries = 2};
    struct kube_client *c = kube_client_create(&cfg, &opts, &err);
    if (c == NULL) {
        say("kubectl-raygate", "%s", err.message);
        rc = 1;
    } else {
        const char *ns = a.namespace_ != NULL ? a.namespace_ : cfg.namespace != NULL ? cfg.namespace : "default";
        rc = run(c, &a, ns, colour_flags());
    }
    kube_client_destroy(c);
    kubeconfig_finish(&cfg);
    free(home_config);
    return rc;
}
