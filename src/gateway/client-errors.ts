import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Node's own answers to what its parser refuses, by error code; anything else is 400. */
const STATUS_LINES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * Answers what Node's HTTP parser refuses on a connection (bytes that are not HTTP, headers too
 * large, a request past its deadline) as Node does, a status line with `Connection: close` and
 * the connection closed, but in turn: when the refused bytes follow whole requests on the same
 * connection (HTTP/1.1 pipelining), every one of those requests is answered first, and the
 * error after them. Node wrote its 400 at once, before the responses still being prepared, so a
 * client read 400 for a request the gateway had accepted. An error within the request being
 * received (or with none) is answered at once, as Node does.
 */
export function answerClientErrorsInTurn(server: Server): void {
  // Each connection's requests not yet answered, in order: Node answers them in that order.
  const unanswered = new WeakMap<Socket, Array<{ req: IncomingMessage; res: ServerResponse }>>();
  const refused = new WeakSet<Socket>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const queue = unanswered.get(socket) ?? [];
    if (queue.length === 0) unanswered.set(socket, queue);
    const entry = { req, res };
    queue.push(entry);
    res.once('close', () => queue.splice(queue.indexOf(entry), 1));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Bytes arriving after the parser failed fail it again: the connection is answered once.
    if (refused.has(socket)) return;
    refused.add(socket);
    const status = STATUS_LINES[err.code ?? ''] ?? '400 Bad Request';
    const answer = () => {
      if (socket.writable) socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
    };
    // The last response that will be written whole: its request arrived whole, or it was ended
    // early (a refusal). A request still arriving is the refused one; its handler waits for a
    // body that will not come.
    const queue = unanswered.get(socket) ?? [];
    for (let i = queue.length - 1; i >= 0; i--) {
      const { req, res } = queue[i]!;
      if (req.complete || res.writableEnded) return void res.once('close', answer);
    }
    answer();
  });
}
