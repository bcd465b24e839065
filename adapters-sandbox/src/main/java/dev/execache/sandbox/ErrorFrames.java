package dev.execache.sandbox;

import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionError;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns the runner's error frame into a structured error with positions in the caller's code. */
final class ErrorFrames {
    /** The code module's URL as Deno prints it, shortened or not, with line and column. */
    private static final Pattern CODE_POSITION =
            Pattern.compile("data:application/typescript;base64,[A-Za-z0-9+/=.]+:(\\d+):(\\d+)");
    private static final Pattern PERMISSION = Pattern.compile("(Requires \\w+ access[^\\n]*)");
    /**
     * Deno's advice to run again with one of its flags: execache has none of them but
     * --allow-read, so the advice names that option or goes.
     */
    private static final Pattern DENO_FLAG_HINT =
            Pattern.compile(",? *[Rr]un again with (?:the )?--(allow-[a-z-]+)(?:=[^\\s,]*)?(?: flag)?");
    static final String READ_HINT = "; execache's --allow-read grants it";
    private static final String SYNTAX_PREFIX = "SyntaxError: ";

    private final ModuleSource source;
    private final HostPaths hostPaths;

    ErrorFrames(ModuleSource source, HostPaths hostPaths) {
        this.source = source;
        this.hostPaths = hostPaths;
    }

    /** @throws IllegalArgumentException when the payload is not five length-prefixed fields */
    ExecutionError parse(String payload) {
        List<String> fields = FrameFields.read(payload, 5, "error");
        String phase = fields.get(0);
        String name = fields.get(1);
        String message = fields.get(2);
        String stack = fields.get(3);
        boolean permission = fields.get(4).equals("1");
        switch (phase) {
            case "pending":
            case "tool":
                return new ExecutionError(ErrorType.RUNTIME_ERROR, message);
            case "serialize":
                return new ExecutionError(ErrorType.SERIALIZATION_ERROR, hostPaths.scrub(message));
            case "result-limit":
                return new ExecutionError(ErrorType.OUTPUT_LIMIT_ERROR, message);
            case "import":
                if (isSyntaxError(name, message)) {
                    return syntaxError(message);
                }
                return thrown(name, message, stack, permission);
            case "run":
            case "uncaught":
                return thrown(name, message, stack, permission);
            default:
                throw new IllegalArgumentException("unknown error phase: " + phase);
        }
    }

    private static boolean isSyntaxError(String name, String message) {
        return name.equals("SyntaxError") || message.startsWith(SYNTAX_PREFIX)
                || message.contains("could not be parsed");
    }

    private ExecutionError syntaxError(String message) {
        String text = message.startsWith(SYNTAX_PREFIX) ? message.substring(SYNTAX_PREFIX.length()) : message;
        int[] position = {0, 0};
        Matcher at = CODE_POSITION.matcher(text);
        if (at.find()) {
            position = source.position(Integer.parseInt(at.group(1)), Integer.parseInt(at.group(2)));
            text = text.substring(0, at.start());
        }
        int newline = text.indexOf('\n');
        if (newline >= 0) {
            text = text.substring(0, newline);
        }
        text = text.strip();
        if (text.endsWith(" at")) {
            text = text.substring(0, text.length() - 3).strip();
        }
        return new ExecutionError(ErrorType.SYNTAX_ERROR, hostPaths.scrub(text), "", position[0], position[1]);
    }

    private ExecutionError thrown(String name, String rawMessage, String rawStack, boolean permission) {
        String message = withExecacheHints(rawMessage);
        String stack = withExecacheHints(rawStack);
        Matcher permissionMessage = PERMISSION.matcher(message);
        if (permission || permissionMessage.find()) {
            String text = permissionMessage.find(0) ? permissionMessage.group(1) : message;
            return located(ErrorType.PERMISSION_ERROR, text, stack);
        }
        String text = name.isEmpty() || message.startsWith(name + ":") ? message : name + ": " + message;
        return located(ErrorType.RUNTIME_ERROR, text, stack);
    }

    private ExecutionError located(ErrorType type, String message, String stack) {
        int[] position = {0, 0};
        Matcher at = CODE_POSITION.matcher(stack);
        if (at.find()) {
            position = source.position(Integer.parseInt(at.group(1)), Integer.parseInt(at.group(2)));
        }
        return new ExecutionError(type, hostPaths.scrub(message), cleanStack(stack), position[0], position[1]);
    }

    /** Code positions as the caller wrote them, no frame of the runner, no host path. */
    String cleanStack(String stack) {
        if (stack.isEmpty()) {
            return stack;
        }
        StringBuilder out = new StringBuilder();
        for (String line : stack.split("\n", -1)) {
            if (line.contains("<runner>") || line.contains(source.runnerUrl())) {
                continue;
            }
            Matcher at = CODE_POSITION.matcher(line);
            StringBuilder rewritten = new StringBuilder();
            while (at.find()) {
                int[] position = source.position(Integer.parseInt(at.group(1)), Integer.parseInt(at.group(2)));
                at.appendReplacement(rewritten, Matcher.quoteReplacement(
                        ModuleSource.CODE_NAME + ":" + position[0] + ":" + position[1]));
            }
            at.appendTail(rewritten);
            if (out.length() > 0) {
                out.append('\n');
            }
            out.append(rewritten);
        }
        return hostPaths.scrub(out.toString());
    }

    static String withExecacheHints(String text) {
        Matcher hint = DENO_FLAG_HINT.matcher(text);
        if (!hint.find()) {
            return text;
        }
        StringBuilder out = new StringBuilder();
        do {
            hint.appendReplacement(out, hint.group(1).equals("allow-read") ? READ_HINT : "");
        } while (hint.find());
        hint.appendTail(out);
        return out.toString();
    }
}
