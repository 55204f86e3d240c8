import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Differential oracle for offsetlake's Python assignors: runs Kafka's own assignors on the same
 * inputs, the way ConsumerCoordinator.onLeaderElected does (subscriptions serialized and
 * deserialized through ConsumerProtocol, put into a HashMap in JoinGroup-response order, assigned
 * against a Cluster). Compiled at test time against kafka-clients; never committed as a class file.
 *
 * Input (stdin), one token per field, tokens URL-encoded, "-" for null/empty:
 *   CASE id instanceKey assignorName
 *   TOPIC name partitionCount
 *   MEMBER memberId instanceId generation userDataHex topic,topic owned(topic:partition,...)
 *   END
 * Output (stdout):
 *   RESULT id memberId topic:partition,...   (the assignment list in the assignor's order)
 *   ERROR id ExceptionClass message
 *   DONE id
 * Assignor instances are kept per instanceKey, like one consumer leading several rebalances
 * (AbstractStickyAssignor.maxGeneration survives between calls).
 */
public class AssignorOracle {
    private static final Map<String, ConsumerPartitionAssignor> INSTANCES = new HashMap<>();

    private static String dec(String token) {
        return token.equals("-") ? null : URLDecoder.decode(token, StandardCharsets.UTF_8);
    }

    private static String enc(String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static ConsumerPartitionAssignor newAssignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String caseId = null;
        String instanceKey = null;
        String assignorName = null;
        List<PartitionInfo> partitionInfos = new ArrayList<>();
        List<String[]> members = new ArrayList<>();
        Node node = new Node(0, "localhost", 9092);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "CASE":
                    caseId = f[1];
                    instanceKey = f[2];
                    assignorName = f[3];
                    partitionInfos = new ArrayList<>();
                    members = new ArrayList<>();
                    break;
                case "TOPIC":
                    for (int p = 0; p < Integer.parseInt(f[2]); p++) {
                        partitionInfos.add(new PartitionInfo(dec(f[1]), p, node, new Node[]{node}, new Node[]{node}));
                    }
                    break;
                case "MEMBER":
                    members.add(f);
                    break;
                case "END":
                    try {
                        ConsumerPartitionAssignor assignor = INSTANCES.computeIfAbsent(instanceKey + "/" + assignorName, k -> newAssignor(k.substring(k.indexOf('/') + 1)));
                        Map<String, Subscription> subscriptions = new HashMap<>();
                        for (String[] m : members) {
                            List<String> topics = new ArrayList<>();
                            if (!m[5].equals("-")) for (String t : m[5].split(",")) topics.add(dec(t));
                            List<TopicPartition> owned = new ArrayList<>();
                            if (m.length > 6 && !m[6].equals("-")) {
                                for (String tp : m[6].split(",")) {
                                    int colon = tp.lastIndexOf(':');
                                    owned.add(new TopicPartition(dec(tp.substring(0, colon)), Integer.parseInt(tp.substring(colon + 1))));
                                }
                            }
                            ByteBuffer userData = m[4].equals("-") ? null : ByteBuffer.wrap(hex(m[4]));
                            Subscription sent = new Subscription(topics, userData, owned, Integer.parseInt(m[3]), Optional.empty());
                            // What the leader reads back from the JoinGroup response.
                            Subscription received = ConsumerProtocol.deserializeSubscription(ConsumerProtocol.serializeSubscription(sent));
                            received.setGroupInstanceId(Optional.ofNullable(dec(m[2])));
                            subscriptions.put(dec(m[1]), received);
                        }
                        Cluster cluster = new Cluster("oracle", List.of(node), partitionInfos, java.util.Set.of(), java.util.Set.of());
                        Map<String, Assignment> result = assignor.assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
                        for (Map.Entry<String, Assignment> e : result.entrySet()) {
                            List<String> parts = new ArrayList<>();
                            for (TopicPartition tp : e.getValue().partitions()) parts.add(enc(tp.topic()) + ":" + tp.partition());
                            out.append("RESULT ").append(caseId).append(' ').append(enc(e.getKey())).append(' ')
                                .append(parts.isEmpty() ? "-" : String.join(",", parts)).append('\n');
                        }
                    } catch (Exception e) {
                        out.append("ERROR ").append(caseId).append(' ').append(e.getClass().getSimpleName()).append(' ')
                            .append(String.valueOf(e.getMessage()).replace('\n', ' ')).append('\n');
                    }
                    out.append("DONE ").append(caseId).append('\n');
                    break;
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }
}
