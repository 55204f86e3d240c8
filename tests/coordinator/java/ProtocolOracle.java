import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;

/**
 * Bytes the Java consumer puts in JoinGroup/SyncGroup (and so in GroupMetadata records), for
 * offsetlake's tests. One request per line, one hex answer per line:
 *   SUB topics owned generation userDataHex   -> ConsumerProtocol.serializeSubscription(v3)
 *   ASG partitions                             -> ConsumerProtocol.serializeAssignment(v3)
 *   STICKY generation partitions               -> StickyAssignor user data after onAssignment
 *   COOP generation                            -> CooperativeStickyAssignor user data after onAssignment
 * Lists are comma-separated ("-" for empty), partitions "topic:n".
 */
public class ProtocolOracle {
    private static List<String> names(String s) {
        List<String> out = new ArrayList<>();
        if (!s.equals("-")) for (String t : s.split(",")) out.add(t);
        return out;
    }

    private static List<TopicPartition> partitions(String s) {
        List<TopicPartition> out = new ArrayList<>();
        for (String p : names(s)) {
            int c = p.lastIndexOf(':');
            out.add(new TopicPartition(p.substring(0, c), Integer.parseInt(p.substring(c + 1))));
        }
        return out;
    }

    private static String hex(ByteBuffer buffer) {
        if (buffer == null) return "-";
        StringBuilder sb = new StringBuilder();
        ByteBuffer b = buffer.duplicate();
        while (b.hasRemaining()) sb.append(String.format("%02x", b.get()));
        return sb.toString();
    }

    private static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ");
            switch (f[0]) {
                case "SUB": {
                    ByteBuffer userData = f[4].equals("-") ? null : ByteBuffer.wrap(unhex(f[4]));
                    Subscription s = new Subscription(names(f[1]), userData, partitions(f[2]), Integer.parseInt(f[3]), Optional.empty());
                    out.append(hex(ConsumerProtocol.serializeSubscription(s))).append('\n');
                    break;
                }
                case "ASG":
                    out.append(hex(ConsumerProtocol.serializeAssignment(new Assignment(partitions(f[1]))))).append('\n');
                    break;
                case "STICKY": {
                    StickyAssignor a = new StickyAssignor();
                    a.onAssignment(new Assignment(partitions(f[2])), new ConsumerGroupMetadata("g", Integer.parseInt(f[1]), "m", Optional.empty()));
                    out.append(hex(a.subscriptionUserData(java.util.Set.of()))).append('\n');
                    break;
                }
                case "COOP": {
                    CooperativeStickyAssignor a = new CooperativeStickyAssignor();
                    a.onAssignment(new Assignment(List.of()), new ConsumerGroupMetadata("g", Integer.parseInt(f[1]), "m", Optional.empty()));
                    out.append(hex(a.subscriptionUserData(java.util.Set.of()))).append('\n');
                    break;
                }
                default:
                    throw new IllegalArgumentException("bad line " + line);
            }
        }
        System.out.print(out);
    }
}
