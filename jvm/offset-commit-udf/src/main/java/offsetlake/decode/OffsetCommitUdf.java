package offsetlake.decode;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.coordinator.group.generated.LegacyOffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.LegacyOffsetCommitValue;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;

/**
 * Spark UDF: an offset-commit record's raw key and value, decoded by Kafka's own generated classes
 * (OffsetCommitKey/Value, LegacyOffsetCommitKey/Value; group-coordinator/src/main/resources/common/
 * message/*.json), as the flat row of offsetlake's offset-commit family (schemas/decoded_records.py):
 * group, topic, partition, offset, leader_epoch, metadata, commit_timestamp, expire_timestamp,
 * topic_id, value_version, is_tombstone.
 *
 * <p>Returns null for any record it does not decode exactly, and the Python decoders (the reference,
 * which name the precise quarantine reason) take it: an unknown type or version, a legacy record with
 * a value other than v0, unknown tagged fields, and anything whose bytes Kafka's classes would not
 * write back identically (trailing bytes, invalid UTF-8 that Java would replace, non-minimal varints).
 * That round trip is what makes "identical to the Python decoder" hold without a second decoder here.
 * Registered by pipelines/decode.py; the classes are shaded (Spark's Kafka source pins clients 3.9.1).
 */
public final class OffsetCommitUdf implements UDF2<byte[], byte[], Row> {
    private static final long serialVersionUID = 1L;
    private static final short KEY_VERSION = 0;

    /**
     * The UDF as pipelines/decode.py registers it, nondeterministic although it is not: Spark's
     * optimizer inlines a struct-valued UDF into every field read from it (CollapseProject), which
     * would run the decode once per output column. (Built here: from Python, py4j picks the untyped
     * Scala overload of functions.udf, which Spark refuses.)
     */
    public static UserDefinedFunction evaluatedOnce(DataType returnType) {
        return functions.udf(new OffsetCommitUdf(), returnType).asNondeterministic();
    }

    @Override
    public Row call(byte[] key, byte[] value) {
        try {
            return decode(key, value);
        } catch (RuntimeException notExact) {
            return null;
        }
    }

    static Row decode(byte[] key, byte[] value) {
        if (key == null || key.length < 2) {
            return null;
        }
        ByteBuffer keyBuffer = ByteBuffer.wrap(key);
        short type = keyBuffer.getShort();
        String group;
        String topic;
        int partition;
        if (type == 1) {
            OffsetCommitKey k = new OffsetCommitKey(new ByteBufferAccessor(keyBuffer), KEY_VERSION);
            if (!writesBack(k, key, KEY_VERSION)) {
                return null;
            }
            group = k.group();
            topic = k.topic();
            partition = k.partition();
        } else if (type == 0) {
            LegacyOffsetCommitKey k = new LegacyOffsetCommitKey(new ByteBufferAccessor(keyBuffer), KEY_VERSION);
            if (!writesBack(k, key, KEY_VERSION)) {
                return null;
            }
            group = k.group();
            topic = k.topic();
            partition = k.partition();
        } else {
            return null;
        }
        if (value == null) {
            return RowFactory.create(group, topic, partition, null, null, null, null, null, null, null, true);
        }
        if (value.length < 2) {
            return null;
        }
        ByteBuffer valueBuffer = ByteBuffer.wrap(value);
        short version = valueBuffer.getShort();
        if (type == 0) {
            if (version != 0) {
                return null;  // LegacyOffsetCommitValue.json: "validVersions": "0"
            }
            LegacyOffsetCommitValue v = new LegacyOffsetCommitValue(new ByteBufferAccessor(valueBuffer), version);
            if (!writesBack(v, value, version)) {
                return null;
            }
            return RowFactory.create(group, topic, partition, v.offset(), null, v.metadata(), v.commitTimestamp(),
                                     null, null, version, false);
        }
        if (version < 0 || version > OffsetCommitValue.HIGHEST_SUPPORTED_VERSION) {
            return null;
        }
        OffsetCommitValue v = new OffsetCommitValue(new ByteBufferAccessor(valueBuffer), version);
        if (!v.unknownTaggedFields().isEmpty() || !writesBack(v, value, version)) {
            return null;
        }
        Integer leaderEpoch = version >= 3 ? v.leaderEpoch() : null;  // added in v3 (KIP-320)
        Long expireTimestamp = version == 1 ? v.expireTimestamp() : null;  // only v1 carries it
        // v4 (Kafka 4.1+) tags the topic id; the zero uuid is the tag's default, i.e. no id written.
        String topicId = version >= 4 && !Uuid.ZERO_UUID.equals(v.topicId()) ? v.topicId().toString() : null;
        return RowFactory.create(group, topic, partition, v.offset(), leaderEpoch, v.metadata(), v.commitTimestamp(),
                                 expireTimestamp, topicId, version, false);
    }

    /**
     * Kafka's classes write the decoded message back to exactly the bytes after the int16 prefix
     * (GroupMetadataUdf checks its records the same way).
     */
    static boolean writesBack(Message message, byte[] bytes, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        if (size != bytes.length - 2) {
            return false;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(out), cache, version);
        return Arrays.equals(out.array(), 0, size, bytes, 2, bytes.length);
    }
}
