package h3load;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.http3.DefaultHttp3DataFrame;
import io.netty.handler.codec.http3.DefaultHttp3HeadersFrame;
import io.netty.handler.codec.http3.Http3;
import io.netty.handler.codec.http3.Http3ClientConnectionHandler;
import io.netty.handler.codec.http3.Http3DataFrame;
import io.netty.handler.codec.http3.Http3Headers;
import io.netty.handler.codec.http3.Http3HeadersFrame;
import io.netty.handler.codec.http3.Http3RequestStreamInboundHandler;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicSslContext;
import io.netty.handler.codec.quic.QuicSslContextBuilder;
import io.netty.handler.codec.quic.QuicStreamChannel;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An h2load-like HTTP/3 load client: -c connections, each keeping -m requests (streams) in flight,
 * closed loop; POSTs the -d body for --warm-up-time then -D seconds and prints h2load's summary
 * lines (requests/s, request and status counts, time for request) plus latency p50/p99 over the
 * measured window. Trusts any server certificate (a benchmark's throwaway one).
 *
 * <p>Usage: h3load [-cN] [-mN] [-tN] [-DSECONDS] [--warm-up-time=SECONDS] [-d FILE] [-H 'name: value']
 * [--nio] https://HOST:PORT/PATH
 */
public final class H3Load {
  private static int conns = 1;
  private static int streams = 1;
  private static int threads = 1;
  private static double seconds = 5;
  private static double warmup = 0;
  private static byte[] body = new byte[0];
  private static final List<String[]> headers = new ArrayList<>();
  private static boolean nio;

  private static volatile long measureStart;
  private static volatile long measureEnd;
  private static volatile boolean stopped;

  public static void main(String[] args) throws Exception {
    URI uri = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.startsWith("--warm-up-time=")) {
        warmup = secondsOf(a.substring("--warm-up-time=".length()));
      } else if (a.equals("--nio")) {
        nio = true;
      } else if (a.startsWith("-c")) {
        conns = Integer.parseInt(value(a, args, ++i));
        i -= a.length() > 2 ? 1 : 0;
      } else if (a.startsWith("-m")) {
        streams = Integer.parseInt(value(a, args, ++i));
        i -= a.length() > 2 ? 1 : 0;
      } else if (a.startsWith("-t")) {
        threads = Integer.parseInt(value(a, args, ++i));
        i -= a.length() > 2 ? 1 : 0;
      } else if (a.startsWith("-D")) {
        seconds = secondsOf(value(a, args, ++i));
        i -= a.length() > 2 ? 1 : 0;
      } else if (a.equals("-d")) {
        body = Files.readAllBytes(Path.of(args[++i]));
      } else if (a.equals("-H")) {
        String[] kv = args[++i].split(":\\s*", 2);
        headers.add(new String[] {kv[0].toLowerCase(), kv[1]});
      } else if (a.startsWith("https://")) {
        uri = URI.create(a);
      } else {
        System.err.println("h3load: unknown argument " + a);
        System.exit(2);
      }
    }
    if (uri == null) {
      System.err.println("h3load: give the URL, https://HOST:PORT/PATH");
      System.exit(2);
    }
    run(uri);
  }

  /** The value of -xN or -x N. */
  private static String value(String a, String[] args, int next) {
    return a.length() > 2 ? a.substring(2) : args[next];
  }

  private static double secondsOf(String s) {
    return Double.parseDouble(s.endsWith("s") ? s.substring(0, s.length() - 1) : s);
  }

  private static void run(URI uri) throws Exception {
    boolean epoll = !nio && Epoll.isAvailable();
    EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(
            threads, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    QuicSslContext ssl =
        QuicSslContextBuilder.forClient()
            .trustManager(InsecureTrustManagerFactory.INSTANCE)
            .applicationProtocols(Http3.supportedApplicationProtocols())
            .build();
    InetSocketAddress remote = new InetSocketAddress(uri.getHost(), uri.getPort());
    String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String authority = uri.getHost() + ":" + uri.getPort();

    List<Conn> all = new ArrayList<>();
    for (int i = 0; i < conns; i++) {
      ChannelHandler codec =
          Http3.newQuicClientCodecBuilder()
              .sslContext(ssl)
              .maxIdleTimeout(30, TimeUnit.SECONDS)
              .initialMaxData(16 << 20)
              .initialMaxStreamDataBidirectionalLocal(1 << 20)
              .initialMaxStreamDataBidirectionalRemote(1 << 20)
              .build();
      Channel udp =
          new Bootstrap()
              .group(group)
              .channel(epoll ? EpollDatagramChannel.class : NioDatagramChannel.class)
              .handler(codec)
              .bind(0)
              .sync()
              .channel();
      QuicChannel quic =
          QuicChannel.newBootstrap(udp)
              .handler(new Http3ClientConnectionHandler())
              .remoteAddress(remote)
              .connect()
              .get();
      all.add(new Conn(quic, path, authority));
    }
    long t0 = System.nanoTime();
    measureStart = t0 + (long) (warmup * 1e9);
    measureEnd = measureStart + (long) (seconds * 1e9);
    for (Conn c : all) {
      c.quic.eventLoop().execute(() -> {
        for (int s = 0; s < streams; s++) {
          c.send();
        }
      });
    }
    long wait;
    while ((wait = measureEnd - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(wait);
    }
    stopped = true;
    // Collect each connection's counters on its own event loop (they are written only there).
    long started = 0, done = 0, ok = 0, c3 = 0, c4 = 0, c5 = 0, errored = 0;
    List<long[]> lat = new ArrayList<>();
    int n = 0;
    for (Conn c : all) {
      long[] snap = c.quic.eventLoop().submit(c::snapshot).get();
      started += snap[0];
      done += snap[1];
      ok += snap[2];
      c3 += snap[3];
      c4 += snap[4];
      c5 += snap[5];
      errored += snap[6];
      long[] l = c.quic.eventLoop().submit(() -> Arrays.copyOf(c.latency, c.nLatency)).get();
      lat.add(l);
      n += l.length;
    }
    long[] l = new long[n];
    int k = 0;
    for (long[] part : lat) {
      System.arraycopy(part, 0, l, k, part.length);
      k += part.length;
    }
    Arrays.sort(l);
    double secs = seconds;
    System.out.printf("finished in %.2fs, %.2f req/s, %d B/s body%n", secs, done / secs, (long) (done * body.length / secs));
    System.out.printf(
        "requests: %d total, %d started, %d done, %d succeeded, %d failed, %d errored, 0 timeout%n",
        done, started, done, ok, done - ok + errored, errored);
    System.out.printf("status codes: %d 2xx, %d 3xx, %d 4xx, %d 5xx%n", ok, c3, c4, c5);
    if (n > 0) {
      double sum = 0, sq = 0;
      for (long v : l) {
        sum += v;
      }
      double mean = sum / n;
      for (long v : l) {
        sq += (v - mean) * (v - mean);
      }
      System.out.printf(
          "time for request: %s %s %s %s%n",
          dur(l[0]), dur(l[n - 1]), dur((long) mean), dur((long) Math.sqrt(sq / n)));
      System.out.printf("latency p50 %s p99 %s%n", dur(l[n / 2]), dur(l[(int) Math.min(n - 1, (long) n * 99 / 100)]));
    }
    System.out.flush();
    // Do not wait for in-flight streams or a graceful QUIC close: the numbers are out.
    Runtime.getRuntime().halt(0);
  }

  private static String dur(long nanos) {
    return nanos >= 1_000_000 ? String.format("%.2fms", nanos / 1e6) : String.format("%dus", nanos / 1000);
  }

  /** One QUIC connection and its counters, touched only on its event loop. */
  private static final class Conn {
    final QuicChannel quic;
    final String path;
    final String authority;
    long started, done, ok, c3, c4, c5, errored;
    long[] latency = new long[1 << 16];
    int nLatency;

    Conn(QuicChannel quic, String path, String authority) {
      this.quic = quic;
      this.path = path;
      this.authority = authority;
    }

    long[] snapshot() {
      return new long[] {started, done, ok, c3, c4, c5, errored};
    }

    void send() {
      if (stopped || !quic.isActive()) {
        return;
      }
      Request req = new Request(this, System.nanoTime());
      Http3.newRequestStream(quic, req)
          .addListener(
              f -> {
                if (!f.isSuccess()) {
                  errored++;
                  quic.eventLoop().schedule(this::send, 1, TimeUnit.MILLISECONDS);
                  return;
                }
                QuicStreamChannel ch = (QuicStreamChannel) f.getNow();
                Http3HeadersFrame hf = new DefaultHttp3HeadersFrame();
                Http3Headers h = hf.headers();
                h.method("POST").path(path).authority(authority).scheme("https");
                for (String[] kv : headers) {
                  h.add(kv[0], kv[1]);
                }
                h.addInt("content-length", body.length);
                ch.write(hf);
                ByteBuf b = ch.alloc().directBuffer(body.length).writeBytes(body);
                ch.writeAndFlush(new DefaultHttp3DataFrame(b)).addListener(QuicStreamChannel.SHUTDOWN_OUTPUT);
              });
    }

    void completed(long start, int status) {
      long now = System.nanoTime();
      if (start >= measureStart && now <= measureEnd) {
        started++;
      }
      if (now >= measureStart && now <= measureEnd) {
        done++;
        if (status >= 200 && status < 300) {
          ok++;
        } else if (status >= 500) {
          c5++;
        } else if (status >= 400) {
          c4++;
        } else if (status >= 300) {
          c3++;
        }
        if (nLatency == latency.length) {
          latency = Arrays.copyOf(latency, latency.length * 2);
        }
        latency[nLatency++] = now - start;
      }
      send();
    }
  }

  /** One request stream: reads the response, counts it when the server's side ends. */
  private static final class Request extends Http3RequestStreamInboundHandler {
    final Conn conn;
    final long start;
    int status;
    boolean finished;

    Request(Conn conn, long start) {
      this.conn = conn;
      this.start = start;
    }

    @Override
    protected void channelRead(ChannelHandlerContext ctx, Http3HeadersFrame frame) {
      CharSequence s = frame.headers().status();
      if (s != null && status == 0) {
        status = Integer.parseInt(s.toString());
      }
      ReferenceCountUtil.release(frame);
    }

    @Override
    protected void channelRead(ChannelHandlerContext ctx, Http3DataFrame frame) {
      ReferenceCountUtil.release(frame);
    }

    @Override
    protected void channelInputClosed(ChannelHandlerContext ctx) {
      finish(ctx, status);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (!finished) {
        conn.errored++;
      }
      finish(ctx, -1);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      finish(ctx, status == 0 ? -1 : status);
      super.channelInactive(ctx);
    }

    private void finish(ChannelHandlerContext ctx, int st) {
      if (finished) {
        return;
      }
      finished = true;
      ctx.close();
      conn.completed(start, st);
    }
  }
}
