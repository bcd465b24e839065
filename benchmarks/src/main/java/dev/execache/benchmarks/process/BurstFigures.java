package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Scratch;
import dev.execache.benchmarks.support.Table;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Bursts against one {@code serve} on SQLite ({@code --max-entries 30 --ttl 1s}): every
 * {@value #PERIOD_SECONDS} s, {@value #CALLS} {@code execute_code} calls written at once (pipelined),
 * {@value #NEW_RUNS} of them new code and the rest repeating code of the same burst. Prints the
 * tail latency beside its parts: the run itself (the answer's {@code executionTimeMs}), the wait for
 * a run slot (the run bound's queue, read from a flight recording of serve) and the rest.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.process.BurstFigures [--bursts=N] [--jar=execache.jar]
 * </pre>
 */
public final class BurstFigures {
    static final int CALLS = 50;
    static final int NEW_RUNS = 35;
    static final int PERIOD_SECONDS = 4;
    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)[,}]");
    private static final Pattern EXECUTION_MS = Pattern.compile("\"executionTimeMs\":([0-9.]+)");
    private static final Pattern CACHE = Pattern.compile("\"cache\":\"(\\w+)\"");

    private BurstFigures() {
    }

    public static void main(String[] args) throws Exception {
        int bursts = 10;
        Path jar = null;
        for (String arg : args) {
            if (arg.startsWith("--bursts=")) {
                bursts = Integer.parseInt(arg.substring("--bursts=".length()));
            } else if (arg.startsWith("--jar=")) {
                jar = Path.of(arg.substring("--jar=".length()));
            } else {
                System.err.println("usage: BurstFigures [--bursts=N] [--jar=execache.jar]");
                System.exit(2);
            }
        }
        if (jar == null) {
            jar = Artifacts.execacheJar();
        }
        Path scratch = Files.createTempDirectory("execache-burst-");
        try {
            run(jar, scratch, bursts);
        } finally {
            // -Dexecache.keep=true keeps serve's flight recording (serve.jfr) to look into
            if (Boolean.getBoolean("execache.keep")) {
                System.out.println("kept " + scratch);
            } else {
                Scratch.deleteTree(scratch);
            }
        }
    }

    private static void run(Path jar, Path scratch, int bursts) throws Exception {
        Path recording = scratch.resolve("serve.jfr");
        Path config = Files.writeString(scratch.resolve("execache.yaml"), "# no servers\n");
        List<String> command = List.of(Artifacts.java(),
                "-XX:StartFlightRecording=filename=" + recording + ",settings=profile"
                        + ",+jdk.ThreadPark#threshold=1ms,+jdk.JavaMonitorEnter#threshold=1ms",
                "-jar", jar.toString(), "serve", "--store", "sqlite", "--db", scratch.resolve("cache.db").toString(),
                "--max-entries", "30", "--ttl", "1s", "--config", config.toString());
        Process serve = new ProcessBuilder(command).redirectError(scratch.resolve("serve.err").toFile()).start();
        Map<Integer, Call> calls = new ConcurrentHashMap<>();
        CountDownLatch answered = new CountDownLatch(bursts * CALLS + 1);
        Thread reader = new Thread(() -> read(serve, calls, answered), "burst-reader");
        reader.start();
        OutputStream in = serve.getOutputStream();
        write(in, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"burst\",\"version\":\"1\"}}}");
        calls.put(0, new Call(0, -1, Instant.now()));
        write(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        int id = 1;
        long next = System.nanoTime();
        for (int burst = 0; burst < bursts; burst++) {
            StringBuilder lines = new StringBuilder();
            List<Call> sent = new ArrayList<>();
            for (int i = 0; i < CALLS; i++) {
                int code = i < NEW_RUNS ? i : (i - NEW_RUNS) * 2;
                String source = "await new Promise(r => setTimeout(r, 50)); return " + (burst * 1000 + code) + ";";
                lines.append("{\"jsonrpc\":\"2.0\",\"id\":").append(id).append(",\"method\":\"tools/call\",\"params\":"
                        + "{\"name\":\"execute_code\",\"arguments\":{\"code\":\"").append(source).append("\"}}}\n");
                sent.add(new Call(id++, burst, null));
            }
            Instant at = Instant.now();
            sent.forEach(call -> calls.put(call.id, call.sentAt(at)));
            in.write(lines.toString().getBytes(StandardCharsets.UTF_8));
            in.flush();
            next += TimeUnit.SECONDS.toNanos(PERIOD_SECONDS);
            long wait = next - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
        }
        if (!answered.await(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException("serve did not answer every call; see " + scratch.resolve("serve.err"));
        }
        in.close();
        if (!serve.waitFor(60, TimeUnit.SECONDS)) {
            serve.destroy();
            serve.waitFor(30, TimeUnit.SECONDS);
        }
        reader.join();
        report(calls, recording, bursts);
    }

    private static void write(OutputStream in, String line) throws IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private static void read(Process serve, Map<Integer, Call> calls, CountDownLatch answered) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                Instant at = Instant.now();
                Matcher id = ID.matcher(line);
                if (!line.contains("\"result\"") && !line.contains("\"error\"") || !id.find()) {
                    continue;
                }
                Call call = calls.get(Integer.parseInt(id.group(1)));
                if (call == null) {
                    continue;
                }
                if (line.contains("\"isError\":true") || line.contains("\"error\":{")) {
                    throw new IllegalStateException("call " + call.id + " failed: " + line);
                }
                Matcher ms = EXECUTION_MS.matcher(line);
                Matcher cache = CACHE.matcher(line);
                call.answered(at, ms.find() ? Double.parseDouble(ms.group(1)) : 0, cache.find() ? cache.group(1) : "?");
                answered.countDown();
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void report(Map<Integer, Call> calls, Path recording, int bursts) throws IOException {
        List<Call> measured = calls.values().stream().filter(call -> call.burst >= 0)
                .sorted(Comparator.comparingLong(Call::nanos)).toList();
        Waits waits = waits(recording);
        matchSlotWaits(measured, waits.slotWaits);
        int tailFrom = (int) Math.floor(measured.size() * 0.95);
        List<Call> tail = measured.subList(tailFrom, measured.size());
        Table table = new Table("calls", "latency (mean)", "the run (mean)", "waiting for a run slot (share)",
                "the rest (share)");
        table.add("all " + measured.size(), millis(mean(measured, Call::nanos)), millis(mean(measured, Call::runNanos)),
                share(measured, call -> call.slotNanos), share(measured, Call::restNanos));
        table.add("slowest 5% (" + tail.size() + ")", millis(mean(tail, Call::nanos)), millis(mean(tail, Call::runNanos)),
                share(tail, call -> call.slotNanos), share(tail, Call::restNanos));
        Map<String, Integer> outcomes = new TreeMap<>();
        measured.forEach(call -> outcomes.merge(call.cache, 1, Integer::sum));
        table.note(String.format(Locale.ROOT, "%d bursts of %d pipelined execute_code calls (%d new code, the rest"
                + " repeating code of the same burst; each run waits 50 ms) every %d s to one serve on SQLite"
                + " (--max-entries 30 --ttl 1s); outcomes %s. Latency from writing the burst to reading each answer:"
                + " p50 %s, p95 %s, p99 %s, max %s; %d over 2 s. The run: executionTimeMs in the answer. Waiting for a"
                + " run slot: from a flight recording of serve (parks of 1 ms or more in the run bound, each matched to"
                + " the call whose run it started). The rest: reading the call, the store, the flight, the answer."
                + " Blocked monitor entries in serve, in all: %s. Load average %s at the end.",
                bursts, CALLS, NEW_RUNS, PERIOD_SECONDS, outcomes, millis(percentile(measured, 0.50)),
                millis(percentile(measured, 0.95)), millis(percentile(measured, 0.99)),
                millis(measured.get(measured.size() - 1).nanos()),
                measured.stream().filter(call -> call.nanos() > 2_000_000_000L).count(), waits.locks(),
                Machine.loadAverage()));
        System.out.print(table.markdown());
    }

    /** What serve's threads waited on: the run bound's parks, and monitors (by where, in ms). */
    private record Waits(List<RecordedEvent> slotWaits, Map<String, Long> monitors) {
        String locks() {
            return monitors.isEmpty() ? "none" : monitors.entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(4)
                    .map(entry -> entry.getKey() + " " + millis(entry.getValue()))
                    .reduce((a, b) -> a + ", " + b).orElse("");
        }
    }

    private static Waits waits(Path recording) throws IOException {
        List<RecordedEvent> slotWaits = new ArrayList<>();
        Map<String, Long> monitors = new HashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            String type = event.getEventType().getName();
            List<String> frames = stack(event);
            if (type.equals("jdk.ThreadPark") && frames.stream().anyMatch(frame -> frame.endsWith("Semaphore.acquire"))
                    && frames.stream().anyMatch(frame -> frame.endsWith("DenoSandbox.execute"))) {
                slotWaits.add(event);
            } else if (type.equals("jdk.JavaMonitorEnter")) {
                String where = frames.stream().filter(frame -> frame.startsWith("dev.execache")).findFirst()
                        .orElse(frames.isEmpty() ? "?" : frames.get(0));
                monitors.merge(where.substring(where.lastIndexOf('.', where.lastIndexOf('.') - 1) + 1),
                        event.getDuration().toNanos(), Long::sum);
            }
        }
        return new Waits(slotWaits, monitors);
    }

    /**
     * A run starts when its wait for a slot ends and lasts its executionTimeMs, and its answer is
     * read soon after: each wait goes to the miss whose answer came nearest after that, within 100 ms.
     */
    private static void matchSlotWaits(List<Call> calls, List<RecordedEvent> slotWaits) {
        List<RecordedEvent> left = new ArrayList<>(slotWaits);
        List<Call> misses = calls.stream().filter(call -> call.executionMs > 0)
                .sorted(Comparator.comparing(call -> call.answeredAt)).toList();
        for (Call call : misses) {
            RecordedEvent best = null;
            long bestGap = TimeUnit.MILLISECONDS.toNanos(100);
            for (RecordedEvent wait : left) {
                Instant runEnd = wait.getEndTime().plusNanos((long) (call.executionMs * 1e6));
                long gap = Duration.between(runEnd, call.answeredAt).toNanos();
                if (gap >= -TimeUnit.MILLISECONDS.toNanos(5) && gap < bestGap) {
                    bestGap = gap;
                    best = wait;
                }
            }
            if (best != null) {
                left.remove(best);
                call.slotNanos = best.getDuration().toNanos();
            }
        }
    }

    private static List<String> stack(RecordedEvent event) {
        if (event.getStackTrace() == null) {
            return List.of();
        }
        List<String> frames = new ArrayList<>();
        for (RecordedFrame frame : event.getStackTrace().getFrames()) {
            frames.add(frame.getMethod().getType().getName() + "." + frame.getMethod().getName());
        }
        return frames;
    }

    private static double mean(List<Call> calls, ToLongFunction<Call> value) {
        return calls.stream().mapToLong(value).average().orElse(0);
    }

    private static long percentile(List<Call> sorted, double p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(sorted.size() * p))).nanos();
    }

    private static String share(List<Call> calls, ToLongFunction<Call> part) {
        double total = calls.stream().mapToLong(Call::nanos).sum();
        double sum = calls.stream().mapToLong(part).sum();
        return String.format(Locale.ROOT, "%s (%.0f%%)", millis(sum / calls.size()), 100 * sum / total);
    }

    private static String millis(double nanos) {
        return String.format(Locale.ROOT, "%.0f ms", nanos / 1e6);
    }

    private static final class Call {
        final int id;
        final int burst;
        volatile Instant sentAt;
        volatile Instant answeredAt;
        volatile double executionMs;
        volatile String cache;
        long slotNanos;

        Call(int id, int burst, Instant sentAt) {
            this.id = id;
            this.burst = burst;
            this.sentAt = sentAt;
        }

        Call sentAt(Instant at) {
            sentAt = at;
            return this;
        }

        void answered(Instant at, double ms, String status) {
            executionMs = ms;
            cache = status;
            answeredAt = at;
        }

        long nanos() {
            return Duration.between(sentAt, answeredAt).toNanos();
        }

        long runNanos() {
            return (long) (executionMs * 1e6);
        }

        long restNanos() {
            return nanos() - runNanos() - slotNanos;
        }
    }
}
