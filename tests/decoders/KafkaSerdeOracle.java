// Test oracle for tests/decoders/test_kafka_serde.py: Kafka's own serde, fed our bytes.
// Input lines:  rec <key hex> <value hex or ->  |  sub <hex>  |  asg <hex>  |  part <utf-8 hex>
// Output lines: rec -> <key hex> <value hex or -> TAB <key JSON> TAB <value JSON or null>
//               sub/asg -> <hex re-serialized at the version read>
//               part -> <Utils.abs(hashCode) % 50> <hashCode>
//               any failure -> ERR <exception>
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;

import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;

public class KafkaSerdeOracle {
    static final HexFormat HEX = HexFormat.of();

    static byte[] bytes(String s) { return s.equals("-") ? null : HEX.parseHex(s); }

    static String hex(byte[] b) { return b == null ? "-" : HEX.formatHex(b); }

    // The generated <Message>JsonConverter.write(message, version), found by name.
    static String json(ApiMessage m, short version) throws Exception {
        Class<?> converter = Class.forName(m.getClass().getName() + "JsonConverter");
        return converter.getMethod("write", m.getClass(), short.class).invoke(null, m, version).toString();
    }

    public static void main(String[] args) throws Exception {
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            String[] p = line.split(" ", -1);
            try {
                switch (p[0]) {
                    case "rec" -> {
                        byte[] v = bytes(p[2]);
                        CoordinatorRecord r = serde.deserialize(ByteBuffer.wrap(bytes(p[1])), v == null ? null : ByteBuffer.wrap(v));
                        out.append(hex(serde.serializeKey(r))).append(' ').append(hex(serde.serializeValue(r)));
                        out.append('\t').append(json(r.key(), (short) 0));
                        out.append('\t').append(r.value() == null ? "null" : json(r.value().message(), r.value().version()));
                    }
                    case "sub" -> {
                        ByteBuffer b = ByteBuffer.wrap(bytes(p[1]));
                        short version = ConsumerProtocol.deserializeVersion(b);
                        ConsumerProtocolSubscription s = ConsumerProtocol.deserializeConsumerProtocolSubscription(b, version);
                        out.append(hex(MessageUtil.toVersionPrefixedBytes(version, s)));
                    }
                    case "asg" -> {
                        ByteBuffer b = ByteBuffer.wrap(bytes(p[1]));
                        short version = ConsumerProtocol.deserializeVersion(b);
                        ConsumerProtocolAssignment a = ConsumerProtocol.deserializeConsumerProtocolAssignment(b, version);
                        out.append(hex(MessageUtil.toVersionPrefixedBytes(version, a)));
                    }
                    case "part" -> {
                        String group = new String(bytes(p[1]), StandardCharsets.UTF_8);
                        out.append(Utils.abs(group.hashCode()) % 50).append(' ').append(group.hashCode());
                    }
                    default -> out.append("ERR unknown line kind ").append(p[0]);
                }
            } catch (Exception e) {
                out.append("ERR ").append(e.toString().replace('\n', ' '));
            }
            out.append('\n');
        }
        Files.writeString(Paths.get(args[1]), out.toString());
    }
}
