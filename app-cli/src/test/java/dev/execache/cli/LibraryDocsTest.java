package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The library guide lists core's public API and SPI; {@link ArchitectureTest} pins the same two
 * lists on the code. This keeps the guide from naming a type that is gone or missing a new one.
 */
class LibraryDocsTest {
    private static final Path GUIDE = Path.of("..", "docs", "java-library.md");
    private static final Pattern TYPE_NAME = Pattern.compile("`([A-Z][A-Za-z]+)`");

    @Test
    void theGuideListsExactlyCoresLibraryApi() throws IOException {
        String list = between(guide(), "- `dev.execache.core`:", "- `dev.execache.core.spi`:");
        assertThat(typeNames(list)).containsExactlyInAnyOrderElementsOf(new TreeSet<>(ArchitectureTest.CORE_API));
    }

    @Test
    void theGuideListsExactlyCoresSpi() throws IOException {
        String list = between(guide(), "- `dev.execache.core.spi`:", "`CodeTools` is both");
        assertThat(typeNames(list)).containsExactlyInAnyOrderElementsOf(new TreeSet<>(ArchitectureTest.CORE_SPI));
    }

    private static String guide() throws IOException {
        return Files.readString(GUIDE, StandardCharsets.UTF_8);
    }

    private static String between(String text, String start, String end) {
        int from = text.indexOf(start);
        assertThat(from).as("%s in %s", start, GUIDE).isNotNegative();
        int to = text.indexOf(end, from + start.length());
        assertThat(to).as("%s in %s", end, GUIDE).isPositive();
        return text.substring(from + start.length(), to);
    }

    private static Set<String> typeNames(String text) {
        Set<String> names = new TreeSet<>();
        Matcher matcher = TYPE_NAME.matcher(text);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }
}
