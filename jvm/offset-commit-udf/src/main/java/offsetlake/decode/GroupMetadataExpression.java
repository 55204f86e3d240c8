package offsetlake.decode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Type;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;

import static offsetlake.decode.OffsetCommitExpression.validUtf8;

/**
 * Spark SQL function {@code offsetlake_decode_group_metadata(key, value)}: a classic group's GroupMetadata record (key type 2), decoded by Kafka's own generated
 * classes (GroupMetadataKey/Value, group-coordinator/src/main/resources/common/message/*.json; each
 * member's subscription and assignment bytes by ConsumerProtocolSubscription/Assignment,
 * clients/src/main/resources/common/message/ConsumerProtocol*.json), as the row the Python decoders
 * give for it (decoders/group_metadata.py): struct&lt;value_version, is_tombstone, group_metadata&gt;,
 * group_metadata shaped as schemas.decoded_records.record_struct("group_metadata").
 *
 * <p>The contract is OffsetCommitExpression's: it returns null for any record it does not decode exactly,
 * and the Python decoders (the reference, which name the precise quarantine reason or undecoded
 * reason) take it. Null for: an unknown version, unknown tagged fields, anything Kafka's classes
 * would not write back byte for byte (trailing bytes, invalid UTF-8 that Java would replace,
 * non-minimal varints; checked without writing, see {@link #writesBackIdentically}), and
 * where the reference does more than Kafka's generated classes: a consumer-protocol blob with a
 * version outside 0-3 (the reference reads a future version with v3's layout, as
 * ConsumerProtocol.deserialize* does) or that does not parse (the reference names why), the sticky
 * assignors' user data other than cooperative-sticky's generation (StickyAssignor's: the reference
 * decodes it by StickyAssignor's own rules; cooperative-sticky's of fewer than 4 bytes, which holds no
 * generation), and a non-consumer protocol type the reference would print differently from plain
 * quoting.
 */
public final class GroupMetadataExpression extends RecordDecodeExpression {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "offsetlake_decode_group_metadata";
    private static final short KEY_VERSION = 0;
    private static final short GROUP_METADATA_TYPE = 2;
    /** ConsumerProtocolSubscription/Assignment "validVersions": "0-3". */
    private static final short HIGHEST_CONSUMER_PROTOCOL_VERSION = 3;
    private static final String CONSUMER_PROTOCOL_TYPE = "consumer";
    private static final String STICKY = "sticky";
    private static final String COOPERATIVE_STICKY = "cooperative-sticky";
    /** CooperativeStickyAssignor.COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0 (KIP-429), private there. */
    private static final Schema COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0 = new Schema(new Field("generation", Type.INT32));
    /** The generation's bytes: the least cooperative-sticky user data that holds one. */
    private static final int COOPERATIVE_STICKY_USER_DATA_SIZE = 4;

    private static final Decode DECODE = new Decode() {
        private static final long serialVersionUID = 1L;

        @Override
        public InternalRow apply(byte[] key, byte[] value) {
            try {
                return decode(key, value);
            } catch (RuntimeException notExact) {
                return null;
            }
        }
    };

    /** The result's type: schemas.decoded_records' GroupMetadata columns, given by pipelines/decode.py. */
    private final DataType type;

    public GroupMetadataExpression(Expression key, Expression value, DataType type) {
        super(key, value);
        this.type = type;
    }

    /** Registers the function, returning {@code type}, in the session's function registry (idempotent). */
    public static void register(SparkSession session, DataType type) {
        register(session, NAME, (key, value) -> new GroupMetadataExpression(key, value, type));
    }

    @Override
    String name() {
        return NAME;
    }

    @Override
    Decode decode() {
        return DECODE;
    }

    @Override
    RecordDecodeExpression withChildren(Expression key, Expression value) {
        return new GroupMetadataExpression(key, value, type);
    }

    @Override
    public DataType dataType() {
        return type;
    }

    static InternalRow decode(byte[] key, byte[] value) {
        if (key == null || key.length < 2) {
            return null;
        }
        ByteBuffer keyBuffer = ByteBuffer.wrap(key);
        if (keyBuffer.getShort() != GROUP_METADATA_TYPE) {
            return null;
        }
        GroupMetadataKey k = new GroupMetadataKey(new CanonicalReader(keyBuffer), KEY_VERSION);
        if (!OffsetCommitExpression.readWhole(keyBuffer, k.group())) {
            return null;
        }
        InternalRow keyRow = row(k.group());
        if (value == null) {
            return row(null, true, row(keyRow, null));
        }
        if (value.length < 2) {
            return null;
        }
        ByteBuffer valueBuffer = ByteBuffer.wrap(value);
        short version = valueBuffer.getShort();
        if (version < 0 || version > GroupMetadataValue.HIGHEST_SUPPORTED_VERSION) {
            return null;
        }
        CanonicalReader reader = new CanonicalReader(valueBuffer).withStringNullsOfMinusOneOnly();
        GroupMetadataValue v = new GroupMetadataValue(reader, version);
        if (!v.unknownTaggedFields().isEmpty() || !writesBackIdentically(v, valueBuffer, reader)) {
            return null;
        }
        boolean consumer = CONSUMER_PROTOCOL_TYPE.equals(v.protocolType());
        String assignor = STICKY.equals(v.protocol()) || COOPERATIVE_STICKY.equals(v.protocol()) ? v.protocol() : null;
        List<InternalRow> members = new ArrayList<>(v.members().size());
        for (GroupMetadataValue.MemberMetadata m : v.members()) {
            if (!m.unknownTaggedFields().isEmpty()) {
                return null;
            }
            byte[] subscriptionRaw = m.subscription();
            byte[] assignmentRaw = m.assignment();
            InternalRow subscription = null;
            InternalRow assignment = null;
            String undecodedReason = null;
            if (!consumer) {
                if (subscriptionRaw.length > 0 || assignmentRaw.length > 0) {
                    String quoted = pythonRepr(v.protocolType());
                    if (quoted == null) {
                        return null;
                    }
                    undecodedReason = "protocol type " + quoted + " is not the consumer protocol";
                }
            } else {
                // Empty bytes are normal (a member missing from the leader's SyncGroup) and stay null.
                if (subscriptionRaw.length > 0 && (subscription = subscription(subscriptionRaw, assignor)) == null) {
                    return null;
                }
                if (assignmentRaw.length > 0 && (assignment = assignment(assignmentRaw)) == null) {
                    return null;
                }
            }
            members.add(row(
                m.memberId(),
                version >= 3 ? m.groupInstanceId() : null,  // v3: static membership, KIP-345
                m.clientId(),
                m.clientHost(),
                version >= 1 ? (Integer) m.rebalanceTimeout() : null,  // v1: KIP-62
                m.sessionTimeout(),
                subscriptionRaw,
                assignmentRaw,
                subscription,
                assignment,
                undecodedReason != null,
                undecodedReason));
        }
        InternalRow valueRow = row(v.protocolType(), v.generation(), v.protocol(), v.leader(),
                                         version >= 2 ? (Long) v.currentStateTimestamp() : null,  // v2: KIP-211
                                         members);
        return row(version, false, row(keyRow, valueRow));
    }

    /** A consumer-protocol blob's buffer past its int16 version, or null without one in 0-3. */
    private static ByteBuffer pastVersion(byte[] raw) {
        if (raw.length < 2) {
            return null;
        }
        ByteBuffer buffer = ByteBuffer.wrap(raw);
        short version = buffer.getShort();
        return version < 0 || version > HIGHEST_CONSUMER_PROTOCOL_VERSION ? null : buffer;
    }

    /** A member's ConsumerProtocolSubscription bytes (int16 version, then the struct), or null. */
    private static InternalRow subscription(byte[] raw, String stickyAssignor) {
        ByteBuffer buffer = pastVersion(raw);
        if (buffer == null) {
            return null;
        }
        short version = buffer.getShort(0);
        CanonicalReader reader = new CanonicalReader(buffer).withStringNullsOfMinusOneOnly();
        ConsumerProtocolSubscription s = new ConsumerProtocolSubscription(reader, version);
        // Non-flexible in every version: read whole with valid strings = written back identically.
        if (buffer.hasRemaining() || !reader.canonical() || !allValidUtf8(s.topics()) || !validUtf8(s.rackId())) {
            return null;
        }
        for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
            if (!validUtf8(tp.topic())) {
                return null;
            }
        }
        if (s.userData() == null && !nullMarkedMinusOne(raw, userDataOffset(s.topics()))) {
            return null;
        }
        byte[] userData = bytes(s.userData());
        InternalRow stickyUserData = null;
        if (stickyAssignor != null && userData != null && userData.length > 0) {
            // What CooperativeStickyAssignor reads of it (memberData: its user data schema, whose read ignores
            // trailing bytes): the generation in the first four bytes, whatever follows, as the reference
            // reads it (decoders/sticky_user_data.py). Trailing bytes are the rule, not a corner: librdkafka's
            // cooperative-sticky assignor (confluent-kafka and the other librdkafka clients) sends
            // StickyAssignor's layout, previous assignment then generation, and leaving each such record to the
            // Python stage made it a visible share of make demo's batches.
            // StickyAssignor's user data, and fewer than four bytes, are left to the reference.
            if (!COOPERATIVE_STICKY.equals(stickyAssignor) || userData.length < COOPERATIVE_STICKY_USER_DATA_SIZE) {
                return null;
            }
            int generation = COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0.read(ByteBuffer.wrap(userData)).getInt("generation");
            stickyUserData = row(null, generation);
        }
        List<InternalRow> owned = null;
        if (version >= 1) {  // v1: KIP-429
            owned = new ArrayList<>(s.ownedPartitions().size());
            for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
                owned.add(row(tp.topic(), tp.partitions()));
            }
        }
        return row(s.topics(), userData, owned,
                                 version >= 2 ? (Integer) s.generationId() : null,  // v2: KAFKA-13715
                                 version >= 3 ? s.rackId() : null,  // v3: KIP-881
                                 version, stickyUserData);
    }

    /** A member's ConsumerProtocolAssignment bytes, or null. */
    private static InternalRow assignment(byte[] raw) {
        ByteBuffer buffer = pastVersion(raw);
        if (buffer == null) {
            return null;
        }
        short version = buffer.getShort(0);
        ConsumerProtocolAssignment a = new ConsumerProtocolAssignment(new CanonicalReader(buffer), version);
        if (buffer.hasRemaining()) {  // non-flexible, as above: read whole with valid strings
            return null;
        }
        for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
            if (!validUtf8(tp.topic())) {
                return null;
            }
        }
        // UserData, nullable, is the last field in every version: with nothing left, its length is the last 4 bytes.
        if (a.userData() == null && !nullMarkedMinusOne(raw, raw.length - Integer.BYTES)) {
            return null;
        }
        List<InternalRow> partitions = new ArrayList<>(a.assignedPartitions().size());
        for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
            partitions.add(row(tp.topic(), tp.partitions()));
        }
        return row(partitions, bytes(a.userData()), version);
    }

    /**
     * Whether Kafka would write the GroupMetadataValue back to {@code value} byte for byte, without writing
     * it (OffsetCommitExpression's class comment gives the reasoning): v0-v3 (what every broker writes,
     * GROUP_METADATA_VALUE_VERSION = 3 in GroupCoordinatorRecordHelpers) are non-flexible, so a whole read
     * with valid strings and no null marker but -1 suffices (CanonicalReader.withStringNullsOfMinusOneOnly); v4
     * ("flexibleVersions": "4+") declares no tagged field, so with no unknown ones, minimal varints
     * (CanonicalReader) are all that is left to check, without Kafka's own size() per record.
     */
    private static boolean writesBackIdentically(GroupMetadataValue v, ByteBuffer read, CanonicalReader reader) {
        if (read.hasRemaining() || !reader.canonical()
                || !validUtf8(v.protocolType()) || !validUtf8(v.protocol()) || !validUtf8(v.leader())) {
            return false;
        }
        for (GroupMetadataValue.MemberMetadata m : v.members()) {
            if (!m.unknownTaggedFields().isEmpty() || !validUtf8(m.memberId()) || !validUtf8(m.groupInstanceId())
                    || !validUtf8(m.clientId()) || !validUtf8(m.clientHost())) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link OffsetCommitExpression#validUtf8} for each string, checked in place rather than gathered
     * into a list and an array first (their copies, Arrays.copyOf and ArrayList.grow, were about 8 % of
     * the GroupMetadata decode's samples in a JFR profile of bench/decode.py's mixed mix).
     */
    private static boolean allValidUtf8(List<String> strings) {
        for (String string : strings) {
            if (!validUtf8(string)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the int32 null marker at {@code offset} of {@code raw} is -1, the only one Kafka writes: its
     * generated readers take any negative length of nullable bytes as null (the consumer protocol's UserData;
     * CanonicalReader.withStringNullsOfMinusOneOnly says why that matters).
     */
    private static boolean nullMarkedMinusOne(byte[] raw, int offset) {
        return offset >= 0 && offset + Integer.BYTES <= raw.length
                && ByteBuffer.wrap(raw, offset, Integer.BYTES).getInt() == -1;
    }

    /**
     * Where a Subscription's UserData length is (ConsumerProtocolSubscription.json: Topics, then UserData, in
     * every version): after the int16 version, the int32 count and each topic's int16 length and bytes. The
     * topics are valid UTF-8 here (checked before), so their Java strings give back their byte counts.
     */
    private static int userDataOffset(List<String> topics) {
        int offset = Short.BYTES + Integer.BYTES;
        for (String topic : topics) {
            offset += Short.BYTES + topic.getBytes(StandardCharsets.UTF_8).length;
        }
        return offset;
    }

    private static byte[] bytes(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        ByteBuffer copy = buffer.duplicate();
        byte[] out = new byte[copy.remaining()];
        copy.get(out);
        return out;
    }

    /**
     * Python's repr() of a string, as the reference's undecoded reason prints it
     * (decoders/group_metadata.py), for printable ASCII without quotes or backslashes; null otherwise.
     */
    private static String pythonRepr(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '\'' || c == '\\') {
                return null;
            }
        }
        return "'" + text + "'";
    }
}
