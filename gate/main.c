/* raygate-gate: the gang gate controller. */
#include <stdio.h>
#include <string.h>

#include "log.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            puts("raygate-gate " RAYGATE_VERSION);
            return 0;
        }
    }
    log_errorf("raygate-gate: not implemented yet");
    return 1;
}
