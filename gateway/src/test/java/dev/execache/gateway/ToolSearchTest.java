package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CatalogTool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ToolSearchTest {
    private static CatalogTool tool(String server, String name, String description, Map<String, Object> properties) {
        return ScriptedCatalog.tool(server, name, Map.of("description", description,
                "inputSchema", Map.of("type", "object", "properties", properties)));
    }

    private static List<String> names(List<ToolSearch.Match> matches) {
        return matches.stream().map(match -> match.tool().name()).toList();
    }

    @Test
    void namesAreSplitAtSnakeCaseAndCamelCaseHumpsLowercasedAndStemmed() {
        assertThat(ToolSearch.tokens("list_pull_requests")).containsExactly("list", "pull", "request");
        assertThat(ToolSearch.tokens("listPullRequests")).containsExactly("list", "pull", "request");
        assertThat(ToolSearch.tokens("HTTPServer getURLs")).containsExactly("http", "server", "get", "url");
        assertThat(ToolSearch.tokens("Repositories, issues and branches!")).containsExactly("repository", "issu", "and",
                "branch");
        assertThat(ToolSearch.tokens("search-files.v2")).containsExactly("search", "fil", "v2");
        assertThat(ToolSearch.tokens("status address analysis is")).containsExactly("status", "address", "analysis",
                "is");
        assertThat(ToolSearch.tokens(null)).isEmpty();
    }

    @Test
    void theFormsOfOneWordShareAStemAndDifferentWordsDoNot() {
        assertThat(List.of("create", "created", "creating", "creates")).allMatch(word -> ToolSearch.stem(word).equals("creat"));
        assertThat(List.of("log", "logs", "logging", "logged")).allMatch(word -> ToolSearch.stem(word).equals("log"));
        assertThat(List.of("copy", "copies", "copied")).allMatch(word -> ToolSearch.stem(word).equals("copy"));
        assertThat(List.of("file", "files", "filed")).allMatch(word -> ToolSearch.stem(word).equals("fil"));
        assertThat(ToolSearch.stem("string")).as("no vowel before -ing: not an ending").isEqualTo("string");
        assertThat(ToolSearch.stem("need")).isEqualTo("need");
        assertThat(ToolSearch.stem("calling")).isEqualTo("call");
        assertThat(ToolSearch.stem("general")).isNotEqualTo(ToolSearch.stem("generate"));
    }

    @Test
    void wordsThatSayNothingOfAToolAreLeftOutOfQueriesAndDocuments() {
        assertThat(ToolSearch.words("What do you know about the files in my folder?"))
                .containsExactly("know", "fil", "folder");
    }

    @Test
    void aNeedPutInOtherWordsFindsTheToolThroughSynonymsBelowTheWordsThemselves() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("kg", "delete_entities", "Delete entities from the knowledge graph.", Map.of()),
                tool("kg", "create_relations", "Create relations between entities.", Map.of()),
                tool("fs", "list_directory", "Lists a directory's entries.", Map.of()),
                tool("fs", "forget_password", "Forget a password.", Map.of())));

        assertThat(names(search.search("remove a thing", 2))).startsWith("kg__delete_entities");
        assertThat(names(search.search("link two things", 1))).containsExactly("kg__create_relations");
        assertThat(names(search.search("what is in this folder", 1))).containsExactly("fs__list_directory");
        assertThat(names(search.search("forget", 10))).as("the word itself first, its synonym after")
                .containsExactly("fs__forget_password", "kg__delete_entities");
    }

    @Test
    void aToolWhoseNameHoldsTheWordsRanksAboveOneWhoseDescriptionMentionsThem() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("fs", "read_file", "Reads a file; see also list_issues elsewhere.", Map.of()),
                tool("github", "list_issues", "Lists the issues of a repository.", Map.of()),
                tool("github", "create_issue", "Opens an issue.", Map.of())));

        assertThat(names(search.search("list issues", 10))).containsExactly("github__list_issues", "fs__read_file",
                "github__create_issue");
    }

    @Test
    void aRareWordWeighsMoreThanACommonOne() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("a", "get_weather", "Get the forecast for a city.", Map.of()),
                tool("a", "get_time", "Get the time in a city.", Map.of()),
                tool("a", "get_news", "Get the news.", Map.of())));

        List<ToolSearch.Match> matches = search.search("get forecast", 10);

        assertThat(names(matches).get(0)).isEqualTo("a__get_weather");
        assertThat(matches).hasSize(3);
        assertThat(matches.get(0).score()).isGreaterThan(matches.get(1).score() * 2);
    }

    @Test
    void aShorterDocumentWithTheSameMatchRanksHigher() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("a", "one", "Deletes a branch and then does many other unrelated things besides, at length.", Map.of()),
                tool("a", "two", "Deletes a branch.", Map.of())));

        assertThat(names(search.search("branch", 10))).containsExactly("a__two", "a__one");
    }

    @Test
    void parameterNamesAndDescriptionsAndTheServerNameAreSearched() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("db", "run", "Runs it.", Map.of("sqlQuery", Map.of("type", "string"))),
                tool("maps", "lookup", "Looks it up.", Map.of("place", Map.of("description", "A postal code")))));

        assertThat(names(search.search("sql", 10))).containsExactly("db__run");
        assertThat(names(search.search("postal codes", 10))).containsExactly("maps__lookup");
        assertThat(names(search.search("maps", 10))).containsExactly("maps__lookup");
    }

    @Test
    void aNameWeighsMoreThanADescriptionWhichWeighsMoreThanAParameter() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("a", "run", "Runs a job.", Map.of("invoice", Map.of("type", "string"))),
                tool("a", "send", "Sends an invoice.", Map.of()),
                tool("a", "invoice", "Makes one.", Map.of())));

        assertThat(names(search.search("invoice", 10))).containsExactly("a__invoice", "a__send", "a__run");
    }

    @Test
    void nestedParametersAndWhatTheServersInstructionsSayOfAToolByNameAreSearched() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("kg", "add", "Adds them.", Map.of("items", Map.of("type", "array", "items", Map.of("type", "object",
                        "properties", Map.of("colour", Map.of("type", "string", "description", "A paint shade")))))),
                tool("demo", "long-task", "Runs.", Map.of()),
                tool("demo", "long-task-2", "Runs too.", Map.of())),
                Map.of("demo", "Use `long-task` for a countdown with progress.\nOther lines say nothing of it."));

        assertThat(names(search.search("paint shades", 10))).containsExactly("kg__add");
        assertThat(names(search.search("countdown", 10))).as("the line names long-task, not long-task-2")
                .containsExactly("demo__long-task");
        assertThat(search.search("nothing", 10)).as("a line that names no tool is of none").isEmpty();
    }

    @Test
    void aWordTheServersInstructionsUseOfTheWholeServerKeepsItsWeightInTheToolThatHoldsIt() {
        ToolSearch search = ToolSearch.of(List.of(
                tool("lab", "get_count", "The counter.", Map.of()),
                tool("lab", "get_other", "Another read.", Map.of()),
                tool("lab", "pid", "This process's id.", Map.of())),
                Map.of("lab", "The lab counts the calls it serves."));

        assertThat(names(search.search("get count", 10))).startsWith("lab__get_count");
    }

    @Test
    void noMatchIsAnEmptyListAndTheLimitKeepsTheBest() {
        List<CatalogTool> tools = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            tools.add(tool("s" + (i % 30), "tool_" + i, "Does thing number " + i + (i == 1234 ? " with kittens." : "."),
                    Map.of()));
        }
        ToolSearch search = ToolSearch.of(tools);

        assertThat(search.search("zebra", 10)).isEmpty();
        assertThat(names(search.search("kitten", 10))).containsExactly("s4__tool_1234");
        assertThat(search.search("thing", 7)).hasSize(7);
        assertThat(search.size()).isEqualTo(3000);
    }
}
