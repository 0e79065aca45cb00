/*
 * kubectl-raygate: the `kubectl raygate` plugin. Shows what raygate's gate
 * controller wrote (PodGroups, Queue status, annotations, Events): queues,
 * gangs and why a gang waits.
 *
 *   kubectl raygate queues [QUEUE] [-o json|yaml|wide]
 *   kubectl raygate gangs [-n NS | -A] [--queue Q] [-o json|yaml|wide]
 *   kubectl raygate why NAME [-n NS] [-o json|yaml]
 *
 * kubectl hands a plugin its arguments as they are: --kubeconfig, --context
 * and -n/--namespace are read here. Exit status: 0, 1 when the API cannot be
 * read or the gang does not exist, 2 for a bad flag or command.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fetch.h"
#include "kube.h"
#include "kubeconfig.h"
#include "output.h"
#include "util.h"
#include "view.h"
#include "why.h"

#ifndef RAYGATE_VERSION
#define RAYGATE_VERSION "dev"
#endif

enum format { FORMAT_TABLE, FORMAT_WIDE, FORMAT_JSON, FORMAT_YAML };

struct args {
    const char *command;
    const char *name; /* queues' QUEUE, why's NAME */
    const char *kubeconfig, *context, *namespace_, *queue;
    int all_namespaces;
    enum format format;
};

static void usage(FILE *f)
{
    fputs("usage: kubectl raygate COMMAND [flags]\n"
          "\n"
          "Commands:\n"
          "  queues [QUEUE]   the queues: capability, what their admitted gangs hold, gangs by phase\n"
          "  gangs            the gangs: state, pods bound, position in the queue, what they wait for\n"
          "  why NAME         why gang NAME (its RayCluster, RayJob or PodGroup name) waits, and what would have to change\n"
          "\n"
          "Flags:\n"
          "  -n, --namespace NS    the namespace (default: the context's, else default)\n"
          "  -A, --all-namespaces  gangs of every namespace\n"
          "      --queue Q         gangs of queue Q only\n"
          "  -o, --output FORMAT   json, yaml or wide\n"
          "      --kubeconfig FILE default $KUBECONFIG, else ~/.kube/config, else in-cluster\n"
          "      --context NAME    the kubeconfig context\n"
          "  -h, --help            this text\n"
          "      --version         the version\n",
          f);
}

/* A usage error: message naming the flag or argument, exit status 2. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kubectl-raygate: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (kubectl raygate --help)\n", stderr);
    return 2;
}

static int parse_format(const char *v, enum format *out)
{
    static const struct {
        const char *name;
        enum format format;
    } formats[] = {{"json", FORMAT_JSON}, {"yaml", FORMAT_YAML}, {"wide", FORMAT_WIDE}};
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (strcmp(v, formats[i].name) == 0) {
            *out = formats[i].format;
            return 0;
        }
    }
    return -1;
}

/* Returns 0, 2 for a usage error (reported), or 3 for --help/--version (printed). */
static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'n'},
        {"all-namespaces", no_argument, NULL, 'A'},
        {"queue", required_argument, NULL, 'q'},
        {"output", required_argument, NULL, 'o'},
        {"kubeconfig", required_argument, NULL, 'k'},
        {"context", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":n:Aq:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            a->namespace_ = optarg;
            break;
        case 'A':
            a->all_namespaces = 1;
            break;
        case 'q':
            a->queue = optarg;
            break;
        case 'o':
            if (parse_format(optarg, &a->format) != 0)
                return bad("-o/--output: unknown format \"%s\" (json, yaml, wide)", optarg);
            break;
        case 'k':
            a->kubeconfig = optarg;
            break;
        case 'c':
            a->context = optarg;
            break;
        case 'h':
            usage(stdout);
            return 3;
        case 'V':
            printf("kubectl-raygate %s\n", RAYGATE_VERSION);
            return 3;
        case ':':
            return bad("flag %s needs a value", argv[optind - 1]);
        default:
            return bad("unknown flag %s", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return bad("%s", "a command is needed: queues, gangs or why");
    a->command = argv[optind++];
    if (strcmp(a->command, "queues") != 0 && strcmp(a->command, "gangs") != 0 && strcmp(a->command, "why") != 0)
        return bad("unknown command \"%s\" (queues, gangs, why)", a->command);
    if (optind < argc)
        a->name = argv[optind++];
    if (optind < argc)
        return bad("unexpected argument \"%s\"", argv[optind]);
    if (strcmp(a->command, "why") == 0 && a->name == NULL)
        return bad("%s", "why needs the gang's NAME");
    if (strcmp(a->command, "gangs") == 0 && a->name != NULL)
        return bad("unexpected argument \"%s\" (gangs takes --queue and -n)", a->name);
    if (strcmp(a->command, "why") == 0 && a->format == FORMAT_WIDE)
        return bad("%s", "-o wide is for queues and gangs");
    return 0;
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
            fputs("kubectl-raygate: cannot write YAML\n", stderr);
            return 1;
        }
    } else {
        table(&b, v, flags | (a->format == FORMAT_WIDE ? OUTPUT_WIDE : 0));
    }
    return emit(&b);
}

static void print_why_text(struct util_buf *b, const json_t *why, unsigned flags)
{
    output_why(b, why, flags);
}

static int run(struct kube_client *c, const struct args *a, const char *ns, unsigned flags)
{
    struct kube_error err = {{0}};
    int gangs = strcmp(a->command, "queues") != 0;
    struct fetch_scope scope = {.what = FETCH_QUEUES | (gangs ? FETCH_GANGS : 0),
                                .namespace_ = strcmp(a->command, "gangs") == 0 && a->all_namespaces ? NULL : ns};
    json_t *snap = fetch_snapshot(c, &scope, &err), *v = NULL, *w;
    if (snap == NULL) {
        fprintf(stderr, "kubectl-raygate: %s\n", err.message);
        return 1;
    }
    long long now = (long long)time(NULL);
    int rc = 0;
    if (strcmp(a->command, "queues") == 0) {
        v = json_pack("{s:o}", "items", view_queues(snap, a->name));
        rc = print_value(v, a, flags, output_queues_table);
    } else if (strcmp(a->command, "gangs") == 0) {
        struct view_filter f = {.namespace_ = scope.namespace_, .queue = a->queue};
        v = json_pack("{s:o}", "items", view_gangs(snap, now, &f));
        rc = print_value(v, a, flags, output_gangs_table);
    } else if ((w = why_explain(snap, now, ns, a->name)) == NULL) {
        fprintf(stderr, "kubectl-raygate: no gang %s in namespace %s\n", a->name, ns);
        rc = 1;
    } else {
        fetch_events(c, snap, ns, json_string_value(json_object_get(json_object_get(w, "gang"), "name")));
        json_decref(w);
        v = why_explain(snap, now, ns, a->name);
        rc = print_value(v, a, flags, print_why_text);
    }
    size_t i;
    json_t *msg;
    json_array_foreach(json_object_get(snap, "warnings"), i, msg) fprintf(stderr, "warning: %s\n", json_string_value(msg));
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
    if (rc != 0)
        return rc == 3 ? 0 : rc;
    struct kubeconfig cfg;
    struct kubeconfig_error kerr = {{0}};
    struct kube_error err = {{0}};
    kubeconfig_init(&cfg);
    char *home_config = NULL;
    const char *path = a.kubeconfig, *home = getenv("HOME");
    if (path == NULL && getenv("KUBECONFIG") == NULL && home != NULL) {
        home_config = util_strdupf("%s/.kube/config", home);
        if (access(home_config, R_OK) == 0)
            path = home_config;
    }
    if (kubeconfig_load(path, a.context, &cfg, &kerr) != 0) {
        fprintf(stderr, "kubectl-raygate: kubeconfig: %s\n", kerr.message);
        free(home_config);
        return 1;
    }
    struct kube_client_options opts = {.user_agent = "kubectl-raygate/" RAYGATE_VERSION, .max_retries = 2};
    struct kube_client *c = kube_client_create(&cfg, &opts, &err);
    if (c == NULL) {
        fprintf(stderr, "kubectl-raygate: %s\n", err.message);
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
