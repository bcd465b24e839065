package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library guide lists core's public API and SPI; {@link ArchitectureTest} pins the same two
 * lists on the code. This keeps the guide from naming a type that is gone or missing a new one.
 */
class LibraryDocsTest {
    private static final Path GUIDE = Path.of("..", "docs", "java-library.md");
    private static final Pattern TYPE_NAME = Pattern.compile("`([A-Z][A-Za-z]+)`");
    private static final Pattern JAVA_SAMPLE = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    /** What a sample may use without saying so: the JDK's usual packages, core and the adapters. */
    private static final String SAMPLE_IMPORTS = String.join("\n", "import java.nio.file.*;", "import java.time.*;",
            "import java.util.*;", "import dev.execache.core.*;", "import dev.execache.core.spi.*;",
            "import dev.execache.store.memory.*;", "import dev.execache.store.sqlite.*;", "import dev.execache.sandbox.*;");

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

    /** Every Java sample in the guide compiles against the code as it is, as the body of a method. */
    @Test
    void theGuidesJavaSamplesCompile(@TempDir Path classes) throws IOException {
        List<JavaFileObject> samples = new ArrayList<>();
        Matcher matcher = JAVA_SAMPLE.matcher(guide());
        while (matcher.find()) {
            String name = "Sample" + samples.size();
            String source = SAMPLE_IMPORTS + "\nclass " + name + " {\n void sample() throws Exception {\n"
                    + matcher.group(1) + "\n }\n}\n";
            samples.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return source;
                }
            });
        }
        assertThat(samples).as("Java samples in %s", GUIDE).isNotEmpty();
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean compiled = compiler.getTask(errors, null, null, List.of("-proc:none", "-d", classes.toString(),
                "-classpath", System.getProperty("java.class.path")), null, samples).call();
        assertThat(compiled).as("the samples of %s compile:%n%s", GUIDE, errors).isTrue();
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
