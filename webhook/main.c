/* raygate-webhook: the TLS mutating admission webhook (see issue: webhook). */
#include <stdio.h>
#include <string.h>

#include "log.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            puts("raygate-webhook " RAYGATE_VERSION);
            return 0;
        }
    }
    log_errorf("raygate-webhook: not implemented yet");
    return 1;
}
