import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * Prints the iteration order of java.util.HashMap / HashSet and Kafka's TimelineHashMap after a
 * sequence of puts and removes, for offsetlake's Java-collection emulation tests.
 *
 * Input: "CASE id kind" (kind: hashmap, hashmap-copy, hashset-copy, timeline), then "+ key" (put),
 * "^ key" (computeIfAbsent) and "- key" (remove) lines, then "END". Keys are strings, "#123" for Integer 123, "@topic/3" for a
 * TopicPartition. Output: "ORDER id key key ...".
 */
public class HashOrderOracle {
    private static Object key(String token) {
        if (token.startsWith("#")) return Integer.parseInt(token.substring(1));
        if (token.startsWith("@")) {
            int slash = token.lastIndexOf('/');
            return new TopicPartition(token.substring(1, slash), Integer.parseInt(token.substring(slash + 1)));
        }
        return token;
    }

    private static String show(Object k) {
        if (k instanceof Integer) return "#" + k;
        if (k instanceof TopicPartition) return "@" + ((TopicPartition) k).topic() + "/" + ((TopicPartition) k).partition();
        return (String) k;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String id = null;
        String kind = null;
        Map<Object, Object> map = null;
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ", 2);
            switch (f[0]) {
                case "CASE":
                    String[] g = f[1].split(" ");
                    id = g[0];
                    kind = g[1];
                    map = kind.equals("timeline")
                        ? new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0)
                        : new HashMap<>();
                    break;
                case "+":
                    map.put(key(f[1]), Boolean.TRUE);
                    break;
                case "^":
                    map.computeIfAbsent(key(f[1]), k -> Boolean.TRUE);
                    break;
                case "-":
                    map.remove(key(f[1]));
                    break;
                case "END":
                    Iterable<Object> keys = map.keySet();
                    if (kind.equals("hashmap-copy")) keys = new HashMap<>(map).keySet();
                    if (kind.equals("hashset-copy")) keys = new HashSet<>(map.keySet());
                    List<String> shown = new ArrayList<>();
                    for (Object k : keys) shown.add(show(k));
                    out.append("ORDER ").append(id);
                    for (String s : shown) out.append(' ').append(s);
                    out.append('\n');
                    break;
                default:
                    throw new IllegalArgumentException("bad line " + line);
            }
        }
        System.out.print(out);
    }
}
