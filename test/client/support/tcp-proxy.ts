import net from 'node:net';

/**
 * A TCP proxy between a client and the gateway that can lose replies and cut
 * connections on demand: the network faults the client's reconnect must survive.
 */
export class TcpProxy {
  /** When true, bytes from the server are dropped (requests arrive, replies are lost). */
  muteReplies = false;
  /** Connections accepted so far. */
  accepted = 0;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = net.createServer((client) => {
      const upstream = net.connect(targetPort, '127.0.0.1');
      const pair: [net.Socket, net.Socket] = [client, upstream];
      proxy!.pairs.add(pair);
      proxy!.accepted++;
      client.on('data', (d) => upstream.write(d));
      upstream.on('data', (d) => {
        if (!proxy!.muteReplies) client.write(d);
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
        proxy!.pairs.delete(pair);
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  /** Cut every open connection abruptly (no WebSocket close frame). */
  dropAll(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise((r) => this.server.close(r));
  }
}
