package offsetlake.decode;

import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * Spark UDF: the record type of a __consumer_offsets key, its leading big-endian int16
 * (CoordinatorRecordSerde reads it the same way before choosing the key's class), or null for a
 * key shorter than two bytes. pipelines/decode.py routes records to their families by it; as a
 * SQL expression (conv(hex(substring(key, 1, 2)), 16, 10)) it cost more than decoding the commit.
 */
public final class RecordTypeUdf implements UDF1<byte[], Short> {
    private static final long serialVersionUID = 1L;

    /** The UDF as pipelines/decode.py registers it (py4j would pick the untyped Scala overload). */
    public static UserDefinedFunction udf() {
        return functions.udf(new RecordTypeUdf(), DataTypes.ShortType);
    }

    @Override
    public Short call(byte[] key) {
        if (key == null || key.length < 2) {
            return null;
        }
        return (short) (((key[0] & 0xff) << 8) | (key[1] & 0xff));
    }
}
