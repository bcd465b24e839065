package dev.execache.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/** Reads what the user hands a command: files and the context. */
final class Inputs {
    private Inputs() {
    }

    /** Reads a file named on the command line; {@code what} names the option in the error. */
    static String readFile(Path workingDir, String name, String what) {
        try {
            return Files.readString(workingDir.resolve(name));
        } catch (NoSuchFileException e) {
            throw new UsageException(what + ": " + name + " does not exist");
        } catch (IOException e) {
            throw new UsageException(what + ": cannot read " + name + ": " + e.getMessage());
        }
    }

    /** The value of {@code --context JSON|@FILE}: an empty object when not given. */
    static Object context(String option, Path workingDir) {
        if (option == null) {
            return Map.of();
        }
        String json = option.startsWith("@") ? readFile(workingDir, option.substring(1), "--context @FILE") : option;
        return Output.parseJson(json, "--context");
    }
}
