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
    void namesAreSplitAtSnakeCaseAndCamelCaseHumpsLowercasedAndMadeSingular() {
        assertThat(ToolSearch.tokens("list_pull_requests")).containsExactly("list", "pull", "request");
        assertThat(ToolSearch.tokens("listPullRequests")).containsExactly("list", "pull", "request");
        assertThat(ToolSearch.tokens("HTTPServer getURLs")).containsExactly("http", "server", "get", "url");
        assertThat(ToolSearch.tokens("Repositories, issues and branches!")).containsExactly("repository", "issue", "and",
                "branch");
        assertThat(ToolSearch.tokens("search-files.v2")).containsExactly("search", "file", "v2");
        assertThat(ToolSearch.tokens("status address analysis is")).containsExactly("status", "address", "analysis",
                "is");
        assertThat(ToolSearch.tokens(null)).isEmpty();
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
