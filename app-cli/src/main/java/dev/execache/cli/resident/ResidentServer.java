package dev.execache.cli.resident;

import dev.execache.cli.Main;
import dev.execache.cli.client.Frames;
import dev.execache.cli.client.Frames.Frame;
import dev.execache.cli.client.Frames.Kind;
import dev.execache.cli.client.Frames.Request;
import dev.execache.cli.client.ServerControl;
import dev.execache.cli.client.ServerDirectory;
import dev.execache.cli.client.ThinClient;
import dev.execache.cli.command.ExitCode;
import dev.execache.cli.command.VersionProvider;
import dev.execache.cli.output.Console;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.UsageException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The user's resident server: runs the command lines that thin clients send, through the same
 * code as a one-shot process ({@link Main#execute}), with each client's arguments, directory,
 * environment and standard streams, and keeps stores and a warm pool of Deno runners open
 * between them. Listens on a Unix domain socket in a directory only the user can open, and
 * stops after an idle period ({@code EXECACHE_SERVER_IDLE}, default 10 minutes).
 */
final class ResidentServer {
    static final Duration DEFAULT_IDLE = Duration.ofMinutes(10);
    private static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final ServerDirectory directory;
    private final String build = ServerControl.build();
    private final Duration idle;
    private final long startedNanos = System.nanoTime();
    private final SharedResources resources = new SharedResources();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong lastActivity = new AtomicLong(System.nanoTime());
    private final CountDownLatch stopped = new CountDownLatch(1);
    private ServerSocketChannel listener;
    private FileChannel lockFile;
    private FileLock lock;
    private volatile boolean stopping;

    private ResidentServer(ServerDirectory directory, Duration idle) {
        this.directory = directory;
        this.idle = idle;
    }

    public static void main(String[] args) throws Exception {
        ThinClient.nameTheSelectorProvider();
        Map<String, String> env = System.getenv();
        Duration idle = DEFAULT_IDLE;
        if (env.containsKey("EXECACHE_SERVER_IDLE")) {
            try {
                idle = Durations.parse(env.get("EXECACHE_SERVER_IDLE"), "EXECACHE_SERVER_IDLE");
            } catch (UsageException e) {
                System.err.println("execache: warning: " + e.getMessage() + "; stopping after " + Durations.format(idle)
                        + " idle");
            }
        }
        ignoreTerminalSignals();
        ResidentServer server = new ResidentServer(ServerDirectory.of(env), idle);
        System.exit(server.serve());
    }

    /** A Ctrl-C or a closed terminal is meant for the command that started the server, not for it. */
    @SuppressWarnings("removal")
    private static void ignoreTerminalSignals() {
        for (String signal : new String[] {"INT", "HUP"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(signal), sun.misc.SignalHandler.SIG_IGN);
            } catch (IllegalArgumentException e) {
                // not a signal on this platform
            }
        }
    }

    private int serve() throws IOException, InterruptedException {
        String problem = directory.create();
        if (problem != null) {
            System.err.println("execache: the resident server refuses to start: " + problem);
            return ExitCode.INFRASTRUCTURE;
        }
        lockFile = FileChannel.open(directory.lock(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        lock = lockFile.tryLock();
        if (lock == null) {
            System.err.println("execache: another resident server is running in " + directory.path());
            return ExitCode.OK;
        }
        Files.deleteIfExists(directory.socket());
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(directory.socket()));
        Files.setPosixFilePermissions(directory.socket(), PosixFilePermissions.fromString("rw-------"));
        System.err.println("execache: resident server pid " + ProcessHandle.current().pid() + " listening on "
                + directory.socket() + " (build " + build + ", stops after " + Durations.format(idle) + " idle)");
        Thread idleWatch = new Thread(this::watchIdle, "execache-idle");
        idleWatch.setDaemon(true);
        idleWatch.start();
        while (!stopping) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (IOException e) {
                break;
            }
            lastActivity.set(System.nanoTime());
            Thread connection = new Thread(() -> handle(channel), "execache-client");
            connection.setDaemon(true);
            connection.start();
        }
        stopped.await();
        return ExitCode.OK;
    }

    private void watchIdle() {
        long step = Math.max(10, Math.min(idle.toMillis() / 4, 10_000));
        while (!stopping) {
            try {
                Thread.sleep(step);
            } catch (InterruptedException e) {
                return;
            }
            if (running.get() == 0 && System.nanoTime() - lastActivity.get() >= idle.toNanos()) {
                System.err.println("execache: idle for " + Durations.format(idle) + ", stopping");
                stopListening();
                finish();
                stopped.countDown();
                return;
            }
        }
    }

    /** Stops taking connections and frees the socket and the lock, so a new server can start at once. */
    private synchronized void stopListening() {
        if (stopping) {
            return;
        }
        stopping = true;
        try {
            listener.close();
            Files.deleteIfExists(directory.socket());
            lock.release();
            lockFile.close();
        } catch (IOException e) {
            System.err.println("execache: while stopping: " + e.getMessage());
        }
    }

    /**
     * Waits for the commands still running (for a while: a stop must not wait on code that never
     * ends), closes stores and sandboxes (ending their Deno processes), and lets the process end.
     */
    private void finish() {
        long deadline = System.nanoTime() + STOP_GRACE.toNanos();
        while (running.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                break;
            }
        }
        resources.close();
    }

    private void handle(SocketChannel channel) {
        try (channel) {
            InputStream in = new BufferedInputStream(Frames.input(channel), 64 * 1024);
            OutputStream out = Frames.output(channel);
            Frame first = Frames.read(in);
            if (first == null) {
                return;
            }
            Request request = Request.decode(first.payload());
            switch (first.kind()) {
                case STATUS -> {
                    Frames.write(out, Kind.STDOUT, status().getBytes(StandardCharsets.UTF_8));
                    Frames.writeExit(out, ExitCode.OK);
                }
                case STOP -> {
                    stopListening();
                    finish();
                    try {
                        Frames.write(out, Kind.STDOUT, ("stopped the resident server (pid "
                                + ProcessHandle.current().pid() + ")\n").getBytes(StandardCharsets.UTF_8));
                        Frames.writeExit(out, ExitCode.OK);
                    } finally {
                        stopped.countDown();
                    }
                }
                case RUN -> {
                    if (!request.build().equals(build)) {
                        System.err.println("execache: a client of another build (" + request.build() + ") replaces this server");
                        stopListening();
                        Frames.write(out, Kind.OTHER_BUILD, build.getBytes(StandardCharsets.UTF_8));
                        new Thread(() -> {
                            finish();
                            stopped.countDown();
                        }, "execache-stop").start();
                        return;
                    }
                    run(request, in, out);
                }
                default -> throw new IOException("a connection opened with " + first.kind());
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("execache: a connection failed: " + e);
        }
    }

    private void run(Request request, InputStream in, OutputStream out) throws IOException {
        running.incrementAndGet();
        Object writing = new Object();
        Stdin stdin = new Stdin(() -> send(writing, out, Kind.READ_STDIN, new byte[0]));
        Thread worker = Thread.currentThread();
        Object done = new Object();
        boolean[] finished = {false};
        Thread reader = new Thread(() -> {
            try {
                for (Frame frame = Frames.read(in); frame != null; frame = Frames.read(in)) {
                    switch (frame.kind()) {
                        case STDIN -> stdin.add(frame.payload());
                        case STDIN_END -> stdin.end();
                        case CANCEL -> {
                            cancel(worker, done, finished, stdin);
                            return;
                        }
                        default -> throw new IOException("unexpected frame " + frame.kind());
                    }
                }
            } catch (IOException e) {
                // the client is gone: as a cancel
            }
            cancel(worker, done, finished, stdin);
        }, "execache-client-input");
        reader.setDaemon(true);
        reader.start();
        PrintStream stdout = new PrintStream(new FrameStream(writing, out, Kind.STDOUT), false, StandardCharsets.UTF_8);
        PrintStream stderr = new PrintStream(new FrameStream(writing, out, Kind.STDERR), false, StandardCharsets.UTF_8);
        int exitCode;
        try {
            Environment environment = new Environment(request.env(), Path.of(request.workingDir()), stdin);
            exitCode = Main.execute(request.args().toArray(String[]::new), environment, new Console(), stdout, stderr,
                    request.terminal(), resources);
        } catch (RuntimeException | Error e) {
            stderr.println("execache: unexpected failure in the resident server: " + e);
            exitCode = ExitCode.INFRASTRUCTURE;
        } finally {
            synchronized (done) {
                finished[0] = true;
                done.notifyAll();
                Thread.interrupted();
            }
            running.decrementAndGet();
            served.incrementAndGet();
            lastActivity.set(System.nanoTime());
        }
        stdout.flush();
        stderr.flush();
        synchronized (writing) {
            Frames.writeExit(out, exitCode);
        }
    }

    /** The client pressed Ctrl-C or went away: the command stops, and with it the code it runs. */
    private static final long CANCEL_REPEAT_MILLIS = 200;

    private static void cancel(Thread worker, Object done, boolean[] finished, Stdin stdin) {
        stdin.end();
        // One interrupt is lost when it lands before the command waits on its sandbox run and a
        // library on the way clears it; so it is repeated until the command has ended.
        synchronized (done) {
            while (!finished[0]) {
                worker.interrupt();
                try {
                    done.wait(CANCEL_REPEAT_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private static void send(Object writing, OutputStream out, Kind kind, byte[] payload) {
        synchronized (writing) {
            try {
                Frames.write(out, kind, payload);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private String status() throws IOException {
        Duration up = Duration.ofNanos(System.nanoTime() - startedNanos);
        StringBuilder text = new StringBuilder();
        text.append("pid     ").append(ProcessHandle.current().pid()).append('\n');
        text.append("uptime  ").append(Durations.format(up)).append('\n');
        text.append("version ").append(new VersionProvider().getVersion()[0]).append('\n');
        text.append(Frames.BUILD_LINE).append(build).append('\n');
        text.append("socket  ").append(directory.socket()).append('\n');
        text.append("idle    stops after ").append(Durations.format(idle)).append(" without commands\n");
        text.append("served  ").append(served.get()).append(" commands, ").append(running.get()).append(" running\n");
        for (String line : resources.describe()) {
            text.append(line).append('\n');
        }
        return text.toString();
    }

    /** A command's stdout or stderr: bytes go to the client as they are flushed, unchanged. */
    private static final class FrameStream extends OutputStream {
        private final Object writing;
        private final OutputStream out;
        private final Kind kind;
        private final BufferedOutputStream buffer;

        FrameStream(Object writing, OutputStream out, Kind kind) {
            this.writing = writing;
            this.out = out;
            this.kind = kind;
            this.buffer = new BufferedOutputStream(new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] bytes, int offset, int length) throws IOException {
                    synchronized (writing) {
                        Frames.write(out, kind, bytes, offset, length);
                    }
                }
            }, 16 * 1024);
        }

        @Override
        public void write(int b) throws IOException {
            buffer.write(b);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            buffer.write(bytes, offset, length);
        }

        @Override
        public void flush() throws IOException {
            buffer.flush();
        }
    }

    /** The command's standard input, asked of the client on the first read (most commands never read it). */
    private static final class Stdin extends InputStream {
        private static final byte[] END = new byte[0];
        private final Runnable ask;
        private final BlockingQueue<byte[]> chunks = new ArrayBlockingQueue<>(16);
        private boolean asked;
        private byte[] current = new byte[0];
        private int position;
        private boolean ended;

        Stdin(Runnable ask) {
            this.ask = ask;
        }

        void add(byte[] chunk) {
            try {
                chunks.put(chunk);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void end() {
            chunks.offer(END);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] bytes, int offset, int length) throws IOException {
            if (length == 0) {
                return 0;
            }
            while (position == current.length) {
                if (ended) {
                    return -1;
                }
                if (!asked) {
                    asked = true;
                    ask.run();
                }
                try {
                    current = chunks.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("standard input: the command was cancelled");
                }
                position = 0;
                if (current == END) {
                    ended = true;
                }
            }
            int n = Math.min(length, current.length - position);
            System.arraycopy(current, position, bytes, offset, n);
            position += n;
            return n;
        }
    }
}
