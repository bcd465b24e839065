package dev.execache.sandbox;

import dev.execache.core.Limits;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The part of a request's limits that Deno takes as command-line flags when it starts: a runner
 * started with one set of flags can only run requests that ask for exactly those.
 *
 * @param memoryMb V8's old-space limit
 * @param allowRead the real paths (links resolved) the code may read; empty for none
 */
record LaunchFlags(int memoryMb, List<String> allowRead) {

    static final LaunchFlags DEFAULTS = of(Limits.DEFAULTS);

    LaunchFlags {
        allowRead = List.copyOf(allowRead);
    }

    /**
     * @throws IllegalArgumentException when a path holds a comma (Deno's list separator) or lies
     *     in /proc
     */
    static LaunchFlags of(Limits limits) {
        List<String> paths = new ArrayList<>();
        for (Path root : ReadAccess.realRoots(limits.allowRead())) {
            String real = root.toString();
            if (real.indexOf(',') >= 0) {
                throw new IllegalArgumentException("allowRead paths must not contain a comma (Deno's list separator): " + real);
            }
            if (!paths.contains(real)) {
                paths.add(real);
            }
        }
        return new LaunchFlags(limits.memoryMb(), paths);
    }

    List<String> command(DenoRuntime runtime) {
        return command(runtime, runtime.launcher());
    }

    /** The command, with {@code launcher} (what starts Deno) in place of the runtime's own. */
    List<String> command(DenoRuntime runtime, List<String> launcher) {
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of("run",
                "--quiet",
                // no code from anywhere but the data: URL the runner imports; Deno 2 would
                // otherwise fetch from jsr.io, deno.land, esm.sh and npm even under --deny-net
                "--no-remote", "--no-npm", "--cached-only", "--deny-import",
                "--no-config", "--no-lock", "--node-modules-dir=none", "--no-code-cache",
                "--no-prompt",
                "--deny-net", "--deny-write", "--deny-run", "--deny-ffi", "--deny-env", "--deny-sys",
                // lets a Worker ask for permissions, so that asking for more than the parent has
                // is a NotCapable error rather than the whole process dying
                "--unstable-worker-options",
                // code that runs outside the runner's main realm is seen (see OtherRealms)
                "--import-map=" + OtherRealms.IMPORT_MAP,
                "--v8-flags=--max-old-space-size=" + memoryMb));
        if (allowRead.isEmpty()) {
            command.add("--deny-read");
        } else {
            command.add("--allow-read=" + String.join(",", allowRead));
            if (allowRead.stream().anyMatch(path -> ReadAccess.PROC.startsWith(path))) {
                // the runner's memory (/proc/self/mem) holds the per-run secret
                command.add("--deny-read=" + ReadAccess.PROC);
            }
        }
        command.add(runtime.runnerModule());
        return command;
    }
}
