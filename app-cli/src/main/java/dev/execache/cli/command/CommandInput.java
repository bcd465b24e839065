package dev.execache.cli.command;

import dev.execache.cli.output.Output;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.UsageException;
import dev.execache.gateway.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads what the user hands a command: code, files and the context. The checks on code and
 * context are the ones {@code serve} makes ({@link #checkCode}, {@link #checkContext}), so a
 * request refused by one face is refused by the other.
 */
final class CommandInput {
    private CommandInput() {
    }

    /** Reads a file named on the command line as UTF-8; {@code what} names the option in the error. */
    static String readFile(Path workingDir, String name, String what) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(workingDir.resolve(name));
        } catch (NoSuchFileException e) {
            throw new UsageException(what + ": " + name + " does not exist");
        } catch (IOException e) {
            throw new UsageException(what + ": cannot read " + name + ": " + e.getMessage());
        }
        return utf8(bytes, what + ": " + name);
    }

    /** Reads all of standard input as UTF-8; {@code what} names the option in the error. */
    static String readStdin(InputStream stdin, String what) {
        try {
            return utf8(stdin.readAllBytes(), what + ": standard input");
        } catch (IOException e) {
            throw new UsageException(what + ": cannot read standard input: " + e.getMessage());
        }
    }

    /**
     * The code of {@code FILE|-}: a file or standard input, with a leading {@code #!} line
     * blanked (kept as an empty comment so line numbers in errors stay right), checked as
     * {@code serve} checks it.
     */
    static String code(String file, Environment environment, String what) {
        String code = file.equals("-") ? readStdin(environment.stdin(), what)
                : readFile(environment.workingDir(), file, what);
        if (code.startsWith("#!")) {
            int end = code.indexOf('\n');
            code = "//" + (end < 0 ? "" : code.substring(end));
        }
        checkCode(code, what + " " + file);
        return code;
    }

    /** The value of {@code --context JSON|@FILE|@-}: an empty object when not given. */
    static Object context(String option, Environment environment) {
        return jsonObject(option, "--context", environment);
    }

    /** The value of an option that takes a JSON object as {@code JSON|@FILE|@-}: an empty object when not given. */
    static Object jsonObject(String option, String name, Environment environment) {
        if (option == null) {
            return Map.of();
        }
        String json;
        if (option.equals("@-")) {
            json = readStdin(environment.stdin(), name + " @-");
        } else if (option.startsWith("@")) {
            json = readFile(environment.workingDir(), option.substring(1), name + " @FILE");
        } else {
            json = option;
        }
        Object value = Output.parseJson(json, name);
        checkContext(value, name);
        return value;
    }

    static void checkCode(Object code, String what) {
        if (!(code instanceof String text) || text.isBlank()) {
            throw new UsageException(what + ": there is no code to run (it is empty)");
        }
    }

    static void checkContext(Object context, String what) {
        if (!(context instanceof Map)) {
            throw new UsageException(what + ": must be a JSON object such as {\"limit\": 10}, not "
                    + Json.jsonType(context));
        }
    }

    private static String utf8(byte[] bytes, String what) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new UsageException(what + " is not UTF-8 text");
        }
    }
}
