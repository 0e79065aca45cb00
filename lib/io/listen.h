/*
 * listen: a listening TCP socket from an address flag, for the programs'
 * HTTP servers (the webhook's TLS port, the gate's metrics port).
 *
 *   "127.0.0.1:9443"  one IPv4 address
 *   "[::1]:9443"      one IPv6 address (brackets required)
 *   ":9443"           all interfaces: one dual-stack IPv6 socket, else IPv4
 */
#ifndef RAYGATE_LISTEN_H
#define RAYGATE_LISTEN_H

#include <stddef.h>

/*
 * Splits addr into host ("" for all interfaces) and port. Returns 0, or -1
 * if addr is not one of the forms above or a part does not fit its buffer.
 */
int listen_split_addr(const char *addr, char *host, size_t host_size, char *port, size_t port_size);

/*
 * Binds and listens (SO_REUSEADDR, close-on-exec, blocking). flag names the
 * option in the error it logs, e.g. "--addr". Returns the socket, or -1 after
 * logging why.
 */
int listen_tcp(const char *addr, const char *flag);

#endif
